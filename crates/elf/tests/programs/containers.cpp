// C++ test program for kfdo-elf: templates, lambdas, std containers and
// algorithms, a class hierarchy with virtual calls, an anonymous namespace
// (internal linkage -> .__uniq. names) -- deep inlining of libstdc++ code.
#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

namespace {
template <typename T> struct Acc {
  T sum{};
  template <typename F> void add(const std::vector<T> &v, F f) {
    for (const auto &x : v) sum += f(x);
  }
};

struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};
struct Sq : Shape {
  double s;
  explicit Sq(double s) : s(s) {}
  double area() const override { return s * s; }
};
struct Rect : Shape {
  double w, h;
  Rect(double w, double h) : w(w), h(h) {}
  double area() const override { return w * h; }
};

int count_words(const std::string &text, std::map<std::string, int> &out) {
  std::string cur;
  int n = 0;
  for (char c : text) {
    if (c == ' ' || c == '\n') {
      if (!cur.empty()) { out[cur]++; cur.clear(); n++; }
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) { out[cur]++; n++; }
  return n;
}
} // namespace

template <typename K, typename V>
V top_value(const std::unordered_map<K, V> &m) {
  V best{};
  for (const auto &kv : m) best = std::max(best, kv.second);
  return best;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  std::sort(v.begin(), v.end(), [](int a, int b) { return (a * 7919) % 1000 < (b * 7919) % 1000; });
  Acc<int> acc;
  int k = 3;
  acc.add(v, [k](int x) { return x % k == 0 ? x : -x; });
  std::vector<Shape *> shapes;
  for (int i = 0; i < 16; i++)
    shapes.push_back(i % 2 ? static_cast<Shape *>(new Sq(i)) : new Rect(i, i + 1));
  double area = 0;
  for (auto *s : shapes) area += s->area();
  for (auto *s : shapes) delete s;
  std::map<std::string, int> words;
  int w = count_words("the quick brown fox jumps over the lazy dog the end", words);
  std::unordered_map<std::string, int> um(words.begin(), words.end());
  std::printf("%d %.1f %d %d\n", acc.sum, area, w, top_value(um));
  return 0;
}
