-- bench.lua: an interpreter-bound workload for the kfdo lua5.4 recipe.
--
--   lua bench.lua [ROUNDS [SEED]]
--
-- Each round runs a fixed set of kernels typical of real Lua programs:
--   tables   records, sorting with a comparator, grouping, a priority queue
--   strings  text generation, gsub/gmatch/format, table.concat, byte scans
--   objects  metatables (operators, __index inheritance), method calls, closures
--   json     a recursive encoder and a recursive-descent decoder
--   recurse  N-queens, binary trees (allocation and GC)
--   numeric  mandelbrot, sieve, spectral-norm style float loops
-- Work grows linearly with ROUNDS; SEED (default 0) shifts the PRNG seeds, so a
-- training run can use inputs other than the benchmark's. Everything is deterministic (own PRNG, no
-- time, no pairs() order in any result), and a checksum per kernel plus a total
-- is printed, so a miscompiled interpreter shows up as a different output.

local ROUNDS = math.tointeger(tonumber(arg and arg[1] or "") or 10) or 10
local SEED = math.tointeger(tonumber(arg and arg[2] or "") or 0) or 0

local floor, fmt, concat = math.floor, string.format, table.concat
local M = 1000000007

local function mix(ck, x)
  return (ck * 31 + x) % M
end

-- Park-Miller style LCG on integers; returns 1..n
local function make_rng(seed)
  local s = seed % 2147483647
  if s <= 0 then s = s + 2147483646 end
  return function(n)
    s = (s * 48271) % 2147483647
    return s % n + 1
  end
end

---------------------------------------------------------------- tables
local function k_tables(rng)
  local ck = 0
  local recs = {}
  local names = { "ada", "bob", "cy", "dee", "eve", "fay", "gus", "hal", "ivy", "jo" }
  for i = 1, 1500 do
    recs[i] = { id = i, name = names[rng(#names)] .. rng(100), score = rng(1000), tags = {} }
    for t = 1, rng(4) do recs[i].tags[t] = rng(20) end
  end
  table.sort(recs, function(a, b)
    if a.score ~= b.score then return a.score > b.score end
    if a.name ~= b.name then return a.name < b.name end
    return a.id < b.id
  end)
  for i = 1, #recs, 7 do ck = mix(ck, recs[i].id) end

  -- group by bucket, then aggregate in a fixed key order
  local groups = {}
  for _, r in ipairs(recs) do
    local key = "g" .. (r.score % 23)
    local g = groups[key]
    if not g then g = { n = 0, sum = 0, tagcount = {} }; groups[key] = g end
    g.n = g.n + 1
    g.sum = g.sum + r.score
    for _, t in ipairs(r.tags) do g.tagcount[t] = (g.tagcount[t] or 0) + 1 end
  end
  for b = 0, 22 do
    local g = groups["g" .. b]
    if g then
      ck = mix(ck, g.n * 1000 + g.sum % 1000)
      for t = 1, 20 do ck = mix(ck, g.tagcount[t] or 0) end
    end
  end

  -- binary heap priority queue
  local heap, hn = {}, 0
  local function push(v)
    hn = hn + 1; heap[hn] = v
    local i = hn
    while i > 1 do
      local p = i // 2
      if heap[p] <= heap[i] then break end
      heap[p], heap[i] = heap[i], heap[p]
      i = p
    end
  end
  local function pop()
    local top = heap[1]
    heap[1] = heap[hn]; heap[hn] = nil; hn = hn - 1
    local i = 1
    while true do
      local l, r, m = 2 * i, 2 * i + 1, i
      if l <= hn and heap[l] < heap[m] then m = l end
      if r <= hn and heap[r] < heap[m] then m = r end
      if m == i then break end
      heap[m], heap[i] = heap[i], heap[m]
      i = m
    end
    return top
  end
  for i = 1, 3000 do
    push(rng(100000))
    if i % 3 == 0 then ck = mix(ck, pop()) end
  end
  while hn > 0 do ck = mix(ck, pop() % 1000) end

  -- insert/remove churn on an array and a hash
  local arr, set = {}, {}
  for i = 1, 1000 do
    table.insert(arr, rng(#arr + 1), i)
    set[rng(500)] = i
    if i % 5 == 0 then table.remove(arr, rng(#arr)) end
  end
  for i = 1, #arr, 11 do ck = mix(ck, arr[i]) end
  for k = 1, 500 do ck = mix(ck, set[k] or 0) end
  return ck
end

---------------------------------------------------------------- strings
local syll = { "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "xe", "zu", "an", "or" }

local function k_strings(rng)
  local ck = 0
  local words = {}
  for i = 1, 1200 do
    local parts = {}
    for j = 1, rng(4) do parts[j] = syll[rng(#syll)] end
    words[i] = concat(parts)
  end
  local text = concat(words, " ")

  -- capitalize, count, reformat
  local cap = text:gsub("(%a)(%a*)", function(a, b) return a:upper() .. b end)
  ck = mix(ck, #cap)
  local counts, order = {}, {}
  for w in text:gmatch("%a+") do
    if not counts[w] then counts[w] = 0; order[#order + 1] = w end
    counts[w] = counts[w] + 1
  end
  table.sort(order, function(a, b)
    if counts[a] ~= counts[b] then return counts[a] > counts[b] end
    return a < b
  end)
  local lines = {}
  for i = 1, math.min(#order, 200) do
    lines[i] = fmt("%-12s %5d %6.2f%%", order[i], counts[order[i]], 100 * counts[order[i]] / #words)
  end
  local report = concat(lines, "\n")
  for i = 1, #report, 3 do ck = mix(ck, report:byte(i)) end

  -- substitutions with patterns and tables
  local repl = { ka = "KA", zu = "", an = "<an>" }
  local s2, n2 = text:gsub("%l%l", repl)
  ck = mix(ck, #s2 + n2)
  local s3 = s2:gsub("<(%a+)>", "[%1]"):gsub("%s+", "_")
  ck = mix(ck, #s3)
  local pos, hits = 1, 0
  while true do
    local a, b = s3:find("[KA]", pos)
    if not a then break end
    hits = hits + 1; pos = b + 1
  end
  ck = mix(ck, hits)
  for k, v in s3:gmatch("(%a+)_(%a+)") do ck = mix(ck, #k * 7 + #v) end

  -- building strings: format, rep, reverse, sub
  local buf = {}
  for i = 1, 800 do
    local w = words[rng(#words)]
    buf[#buf + 1] = fmt("%04d:%s:%x:%s", i, w, i * 2654435761 % 65536, w:reverse():sub(1, 3))
  end
  local joined = concat(buf, ";")
  local sum = 0
  for i = 1, #joined do sum = sum + joined:byte(i) * (i % 7 + 1) end
  ck = mix(ck, sum % M)
  ck = mix(ck, #(("ab"):rep(100, ",")))
  -- numbers <-> strings
  local acc = 0
  for i = 1, 1500 do acc = acc + tonumber(tostring(i * 37) .. "5") % 1009 end
  ck = mix(ck, acc)
  return ck
end

---------------------------------------------------------------- objects
local Vec = {}
Vec.__index = Vec
local function vec(x, y) return setmetatable({ x = x, y = y }, Vec) end
Vec.__add = function(a, b) return vec(a.x + b.x, a.y + b.y) end
Vec.__sub = function(a, b) return vec(a.x - b.x, a.y - b.y) end
Vec.__mul = function(a, k) return vec(a.x * k, a.y * k) end
Vec.__eq = function(a, b) return a.x == b.x and a.y == b.y end
function Vec:dot(o) return self.x * o.x + self.y * o.y end
function Vec:len2() return self:dot(self) end

local Shape = {}
Shape.__index = Shape
function Shape.new(cls, name) local o = setmetatable({ name = name }, cls); return o end
function Shape:area() return 0 end
function Shape:describe() return self.name .. "=" .. floor(self:area()) end

local Rect = setmetatable({}, { __index = Shape })
Rect.__index = Rect
function Rect.new(w, h) local o = Shape.new(Rect, "rect"); o.w, o.h = w, h; return o end
function Rect:area() return self.w * self.h end

local Circle = setmetatable({}, { __index = Shape })
Circle.__index = Circle
function Circle.new(r) local o = Shape.new(Circle, "circle"); o.r = r; return o end
function Circle:area() return 3 * self.r * self.r end

local Square = setmetatable({}, { __index = Rect })
Square.__index = Square
function Square.new(s) local o = Rect.new(s, s); o.name = "square"; return setmetatable(o, Square) end

local function k_objects(rng)
  local ck = 0
  -- particle simulation with operator overloading (integer coordinates)
  local ps, vs = {}, {}
  for i = 1, 300 do ps[i] = vec(rng(1000), rng(1000)); vs[i] = vec(rng(7) - 4, rng(7) - 4) end
  for _ = 1, 20 do
    for i = 1, #ps do
      local p = ps[i] + vs[i]
      if p.x < 0 or p.x > 1000 then vs[i] = vec(-vs[i].x, vs[i].y) end
      if p.y < 0 or p.y > 1000 then vs[i] = vec(vs[i].x, -vs[i].y) end
      ps[i] = p
    end
  end
  local centre = vec(500, 500)
  for i = 1, #ps do
    ck = mix(ck, (ps[i] - centre):len2() % 100003)
    if ps[i] == centre then ck = mix(ck, 1) end
  end
  ck = mix(ck, (vs[1] * 3):dot(vs[2]) + 100)

  -- polymorphic method dispatch through an inheritance chain
  local shapes = {}
  for i = 1, 600 do
    local k = rng(3)
    if k == 1 then shapes[i] = Rect.new(rng(20), rng(20))
    elseif k == 2 then shapes[i] = Circle.new(rng(10))
    else shapes[i] = Square.new(rng(15)) end
  end
  local total, dlen = 0, 0
  for _ = 1, 4 do
    for i = 1, #shapes do
      local s = shapes[i]
      total = total + s:area()
      dlen = dlen + #s:describe()
    end
  end
  ck = mix(ck, total % M); ck = mix(ck, dlen)

  -- closures: counters, composition, memoization, an event emitter
  local function counter(step)
    local n = 0
    return function() n = n + step; return n end
  end
  local function compose(f, g) return function(x) return f(g(x)) end end
  local inc3 = counter(3)
  local f = compose(function(x) return x * 2 + 1 end, function(x) return x % 97 end)
  for i = 1, 3000 do ck = mix(ck, f(inc3() + i)) end

  local memo = {}
  local function collatz(n)
    if n == 1 then return 0 end
    local m = memo[n]
    if m then return m end
    local r = 1 + collatz(n % 2 == 0 and n // 2 or 3 * n + 1)
    memo[n] = r
    return r
  end
  local best = 0
  for i = 1, 3000 do local c = collatz(i); if c > best then best = c end end
  ck = mix(ck, best)

  local handlers = {}
  local function on(ev, fn) local h = handlers[ev] or {}; handlers[ev] = h; h[#h + 1] = fn end
  local function emit(ev, ...) local h = handlers[ev]; local acc = 0
    if h then for i = 1, #h do acc = acc + h[i](...) end end
    return acc
  end
  for i = 1, 8 do on("tick", function(a, b) return a * i + b end) end
  on("tock", function(a) return -a end)
  for i = 1, 2000 do ck = mix(ck, (emit("tick", i, 3) + emit("tock", i)) % M) end

  -- a closure-based iterator and a coroutine generator
  local function range(a, b, s)
    local i = a - s
    return function() i = i + s; if i <= b then return i end end
  end
  for i in range(1, 3000, 3) do ck = mix(ck, i) end
  local gen = coroutine.wrap(function()
    local a, b = 0, 1
    for _ = 1, 500 do coroutine.yield(a); a, b = b, (a + b) % M end
  end)
  for _ = 1, 500 do ck = mix(ck, gen()) end
  return ck
end

---------------------------------------------------------------- json
local function encode(v, out)
  local t = type(v)
  if t == "table" then
    if #v > 0 or next(v) == nil then
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        encode(v[i], out)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = k end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = fmt("%q:", k)
        encode(v[k], out)
      end
      out[#out + 1] = "}"
    end
  elseif t == "string" then
    out[#out + 1] = '"' .. v:gsub('[%c"\\]', function(c) return fmt("\\u%04x", c:byte()) end) .. '"'
  elseif t == "number" then
    out[#out + 1] = math.type(v) == "integer" and tostring(v) or fmt("%.14g", v)
  else
    out[#out + 1] = tostring(v)
  end
  return out
end

local function decode(s)
  local pos = 1
  local value
  local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
  local function str()
    local buf = {}
    pos = pos + 1
    while true do
      local c = s:sub(pos, pos)
      if c == '"' then pos = pos + 1; return concat(buf) end
      if c == "\\" then
        local hex = s:sub(pos + 2, pos + 5)
        buf[#buf + 1] = string.char(tonumber(hex, 16)); pos = pos + 6
      else
        local e = s:find('["\\]', pos)
        buf[#buf + 1] = s:sub(pos, e - 1); pos = e
      end
    end
  end
  function value()
    ws()
    local c = s:sub(pos, pos)
    if c == "{" then
      local obj = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "}" then pos = pos + 1; return obj end
      while true do
        ws(); local k = str(); ws()
        pos = pos + 1 -- ':'
        obj[k] = value(); ws()
        local d = s:sub(pos, pos); pos = pos + 1
        if d == "}" then return obj end
      end
    elseif c == "[" then
      local arr = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "]" then pos = pos + 1; return arr end
      while true do
        arr[#arr + 1] = value(); ws()
        local d = s:sub(pos, pos); pos = pos + 1
        if d == "]" then return arr end
      end
    elseif c == '"' then
      return str()
    elseif s:sub(pos, pos + 3) == "true" then pos = pos + 4; return true
    elseif s:sub(pos, pos + 4) == "false" then pos = pos + 5; return false
    else
      local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      pos = pos + #num
      return math.tointeger(tonumber(num)) or tonumber(num)
    end
  end
  return value()
end

local function k_json(rng)
  local ck = 0
  local function gen(depth)
    local k = rng(depth > 3 and 3 or 5)
    if k == 1 then return rng(100000) - 50000
    elseif k == 2 then return syll[rng(#syll)] .. (rng(4) == 1 and '"q\n' or "") .. syll[rng(#syll)]
    elseif k == 3 then return rng(2) == 1
    elseif k == 4 then
      local a = {}
      for i = 1, rng(6) do a[i] = gen(depth + 1) end
      return a
    else
      local o = {}
      for _ = 1, rng(6) do o[syll[rng(#syll)] .. rng(9)] = gen(depth + 1) end
      o.f = rng(1000) / 8
      return o
    end
  end
  for _ = 1, 9 do
    local doc = { items = {}, meta = { n = 0 } }
    for i = 1, 40 do doc.items[i] = gen(0) end
    local text = concat(encode(doc, {}))
    local back = decode(text)
    local again = concat(encode(back, {}))
    if again ~= text then error("json round trip mismatch") end
    ck = mix(ck, #text)
    for i = 1, #text, 13 do ck = mix(ck, text:byte(i)) end
  end
  return ck
end

---------------------------------------------------------------- recursion
local function queens(n)
  local cols, d1, d2 = {}, {}, {}
  local count = 0
  local function place(r)
    if r > n then count = count + 1; return end
    for c = 1, n do
      if not cols[c] and not d1[r + c] and not d2[r - c + n] then
        cols[c], d1[r + c], d2[r - c + n] = true, true, true
        place(r + 1)
        cols[c], d1[r + c], d2[r - c + n] = false, false, false
      end
    end
  end
  place(1)
  return count
end

local function bottom_up(d)
  if d == 0 then return {} end
  d = d - 1
  return { bottom_up(d), bottom_up(d) }
end
local function item_check(t)
  if t[1] then return 1 + item_check(t[1]) + item_check(t[2]) end
  return 1
end

local function k_recurse(rng)
  local ck = mix(0, queens(7 + rng(2)))
  local long = bottom_up(12)
  for d = 4, 10, 2 do
    local iters = 1 << (12 - d)
    local chk = 0
    for _ = 1, iters do chk = chk + item_check(bottom_up(d)) end
    ck = mix(ck, chk)
  end
  ck = mix(ck, item_check(long))
  -- naive fibonacci: pure call overhead
  local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
  ck = mix(ck, fib(20 + rng(2)))
  -- quicksort written in Lua
  local a = {}
  for i = 1, 3000 do a[i] = rng(1000000) end
  local function qsort(lo, hi)
    while lo < hi do
      local p, i = a[(lo + hi) // 2], lo
      local j = hi
      while i <= j do
        while a[i] < p do i = i + 1 end
        while a[j] > p do j = j - 1 end
        if i <= j then a[i], a[j] = a[j], a[i]; i = i + 1; j = j - 1 end
      end
      if j - lo < hi - i then qsort(lo, j); lo = i else qsort(i, hi); hi = j end
    end
  end
  qsort(1, #a)
  for i = 2, #a do if a[i - 1] > a[i] then error("qsort") end end
  for i = 1, #a, 97 do ck = mix(ck, a[i] % 100000) end
  return ck
end

---------------------------------------------------------------- numeric
local function k_numeric(rng)
  local ck = 0
  -- mandelbrot on a small grid, integer count of escape iterations
  local w, h, maxit = 56, 40, 60
  local off = rng(10) / 100
  local total = 0
  for py = 0, h - 1 do
    local ci = (py / h) * 2.4 - 1.2
    for px = 0, w - 1 do
      local cr = (px / w) * 3.2 - 2.2 + off
      local zr, zi, it = 0.0, 0.0, 0
      while it < maxit and zr * zr + zi * zi <= 4.0 do
        zr, zi = zr * zr - zi * zi + cr, 2 * zr * zi + ci
        it = it + 1
      end
      total = total + it
    end
  end
  ck = mix(ck, total)

  -- sieve of Eratosthenes
  local n = 30000
  local comp, primes = {}, 0
  for i = 2, n do
    if not comp[i] then
      primes = primes + 1
      for j = i * i, n, i do comp[j] = true end
    end
  end
  ck = mix(ck, primes)

  -- spectral-norm style matrix-vector products
  local m = 60
  local function A(i, j) return 1.0 / ((i + j) * (i + j + 1) / 2 + i + 1) end
  local u, v = {}, {}
  for i = 1, m do u[i] = 1.0 end
  local function mul(x, y, tr)
    for i = 1, m do
      local s = 0.0
      for j = 1, m do
        if tr then s = s + A(j - 1, i - 1) * x[j] else s = s + A(i - 1, j - 1) * x[j] end
      end
      y[i] = s
    end
  end
  local t = {}
  for _ = 1, 4 do
    mul(u, t, false); mul(t, v, true)
    mul(v, t, false); mul(t, u, true)
  end
  local vbv, vv = 0.0, 0.0
  for i = 1, m do vbv = vbv + u[i] * v[i]; vv = vv + v[i] * v[i] end
  ck = mix(ck, floor(math.sqrt(vbv / vv) * 1e9))

  -- integer bit mixing (xorshift) loop
  local x = 88172645463325252 + rng(1000)
  local acc = 0
  for _ = 1, 20000 do
    x = x ~ (x << 13); x = x ~ (x >> 7); x = x ~ (x << 17)
    acc = (acc + (x & 0xffff)) % M
  end
  ck = mix(ck, acc)
  return ck
end

---------------------------------------------------------------- driver
local kernels = {
  { "tables", k_tables }, { "strings", k_strings }, { "objects", k_objects },
  { "json", k_json }, { "recurse", k_recurse }, { "numeric", k_numeric },
}
local sums = {}
for i = 1, #kernels do sums[i] = 0 end
for round = 1, ROUNDS do
  for i, k in ipairs(kernels) do
    sums[i] = mix(sums[i], k[2](make_rng((SEED + round) * 7919 + i)))
  end
end
local total = 0
for i, k in ipairs(kernels) do
  print(fmt("%-8s %10d", k[1], sums[i]))
  total = mix(total, sums[i])
end
print(fmt("rounds %d seed %d checksum %d", ROUNDS, SEED, total))
