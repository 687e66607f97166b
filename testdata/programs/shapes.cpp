// Shapes in a scene: virtual dispatch, templates, lambdas and std containers.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace scene {

struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
  virtual const char *kind() const = 0;
};

struct Circle : Shape {
  double r;
  explicit Circle(double r) : r(r) {}
  double area() const override { return M_PI * r * r; }
  const char *kind() const override { return "circle"; }
};

struct Rect : Shape {
  double w, h;
  Rect(double w, double h) : w(w), h(h) {}
  double area() const override { return w * h; }
  const char *kind() const override { return "rect"; }
};

struct Triangle : Shape {
  double a, b, c;
  Triangle(double a, double b, double c) : a(a), b(b), c(c) {}
  double area() const override {
    double s = (a + b + c) / 2;
    return std::sqrt(std::max(0.0, s * (s - a) * (s - b) * (s - c)));
  }
  const char *kind() const override { return "triangle"; }
};

template <typename T, typename F> T fold(const std::vector<T> &v, T init, F f) {
  for (const auto &x : v) init = f(init, x);
  return init;
}

template <typename K> class Histogram {
  std::map<K, long> counts_;

public:
  void add(const K &k) { ++counts_[k]; }
  long get(const K &k) const {
    auto it = counts_.find(k);
    return it == counts_.end() ? 0 : it->second;
  }
  size_t size() const { return counts_.size(); }
};

static unsigned next(unsigned &seed) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

std::vector<std::unique_ptr<Shape>> make(unsigned n, unsigned seed) {
  std::vector<std::unique_ptr<Shape>> v;
  v.reserve(n);
  for (unsigned i = 0; i < n; i++) {
    double x = 1 + next(seed) % 100 / 10.0;
    switch (next(seed) % 3) {
    case 0: v.push_back(std::make_unique<Circle>(x)); break;
    case 1: v.push_back(std::make_unique<Rect>(x, x / 2 + 1)); break;
    default: v.push_back(std::make_unique<Triangle>(x, x + 1, x + 1.5)); break;
    }
  }
  return v;
}

} // namespace scene

int main(int argc, char **argv) {
  unsigned n = argc > 1 ? (unsigned)std::strtoul(argv[1], nullptr, 10) : 20000;
  auto shapes = scene::make(n, 7);
  std::vector<double> areas;
  scene::Histogram<std::string> kinds;
  double total = 0;
  for (int round = 0; round < 6; round++) {
    areas.clear();
    for (const auto &s : shapes) {
      areas.push_back(s->area());
      if (round == 0) kinds.add(s->kind());
    }
    std::sort(areas.begin(), areas.end(), [](double a, double b) { return a > b; });
    total += scene::fold(areas, 0.0, [](double acc, double a) { return acc + std::sqrt(a); });
  }
  std::printf("%zu kinds, circles %ld, total %.3f\n", kinds.size(), kinds.get("circle"), total);
  return 0;
}
