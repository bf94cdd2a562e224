#include "experiment/report/charts.hpp"

#include "experiment/report/bitmap_font.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace troupe::report {
namespace {

// A short label for a value: whole numbers from 1000 up, else 3 significant digits; an exponent
// only for the very large and very small.
std::string tick_label(double v) {
  char text[32];
  if (v != 0 && (std::fabs(v) >= 1e7 || std::fabs(v) < 1e-3))
    std::snprintf(text, sizeof text, "%.1e", v);
  else if (std::fabs(v) >= 1000)
    std::snprintf(text, sizeof text, "%.0f", v);  // 22292, not 2.23e+04
  else
    std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

struct Range {
  double lo, hi;
  double span() const { return hi - lo; }
};

Range padded(double lo, double hi) {
  if (!(hi > lo)) return {lo - 1, hi + 1};  // one value, or none: a unit window around it
  return {lo, hi};
}

// Title, axes, ticks, grid lines and axis labels around the plot area.
void frame(Canvas& c, const PlotArea& a, const ChartLabels& labels, Range x, Range y,
           bool x_ticks) {
  c.text((kChartWidth - Canvas::text_width(labels.title, 2)) / 2, 10, labels.title, kBlack, 2);
  for (int i = 0; i <= 4; ++i) {
    const int py = a.bottom - (a.bottom - a.top) * i / 4;
    c.line(a.left, py, a.right, py, kGrey);
    const std::string t = tick_label(y.lo + y.span() * i / 4);
    c.text(a.left - 6 - Canvas::text_width(t), py - 3, t, kBlack);
    if (!x_ticks) continue;
    const int px = a.left + (a.right - a.left) * i / 4;
    c.line(px, a.bottom, px, a.bottom + 4, kBlack);
    const std::string xt = tick_label(x.lo + x.span() * i / 4);
    c.text(px - Canvas::text_width(xt) / 2, a.bottom + 8, xt, kBlack);
  }
  c.line(a.left, a.top, a.left, a.bottom, kBlack);
  c.line(a.left, a.bottom, a.right, a.bottom, kBlack);
  c.text((a.left + a.right - Canvas::text_width(labels.x_axis)) / 2, a.bottom + 24, labels.x_axis,
         kBlack);
  c.text(4, a.top - 14, labels.y_axis, kBlack);
}

void legend(Canvas& c, const PlotArea& a, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    const int y = a.top + int(i) * 16;
    c.fill_rect(a.right + 12, y, 12, 8, series_color(i));
    c.text(a.right + 30, y, names[i].substr(0, 24), kBlack);
  }
}

}  // namespace

Canvas line_chart(const std::vector<Series>& series, const ChartLabels& labels) {
  Canvas c(kChartWidth, kChartHeight);
  PlotArea a;
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const auto& s : series)
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
  if (!std::isfinite(x_lo)) x_lo = x_hi = y_lo = y_hi = 0;
  const Range x = padded(std::min(0.0, x_lo), x_hi), y = padded(std::min(0.0, y_lo), y_hi);
  frame(c, a, labels, x, y, true);
  auto px = [&](double v) {
    return a.left + int(std::lround((v - x.lo) / x.span() * (a.right - a.left)));
  };
  auto py = [&](double v) {
    return a.bottom - int(std::lround((v - y.lo) / y.span() * (a.bottom - a.top)));
  };
  std::vector<std::string> names;
  for (size_t i = 0; i < series.size(); ++i) {
    names.push_back(series[i].name);
    const auto& p = series[i].points;
    for (size_t k = 0; k < p.size(); ++k) {
      if (!std::isfinite(p[k].second)) continue;
      if (k > 0 && std::isfinite(p[k - 1].second))
        c.line(px(p[k - 1].first), py(p[k - 1].second), px(p[k].first), py(p[k].second),
               series_color(i), 2);
      else
        c.fill_rect(px(p[k].first) - 1, py(p[k].second) - 1, 3, 3, series_color(i));
    }
  }
  legend(c, a, names);
  return c;
}

// The names under the bars, each from the start of its slot. Names too long for one slot go on
// two alternating rows, so each may use two slots' width without running into its neighbour.
void bar_labels(Canvas& c, const PlotArea& a, const std::vector<std::string>& names, int slot) {
  bool staggered = false;
  for (const auto& name : names) staggered |= Canvas::text_width(name) > slot - 4;
  const size_t fits = size_t(std::max(1, ((staggered ? 2 * slot : slot) - 4) / kGlyphAdvance));
  for (size_t i = 0; i < names.size(); ++i) {
    const int row = staggered ? int(i % 2) : 0;
    c.text(a.left + int(i) * slot + 2, a.bottom + 8 + row * (kGlyphHeight + 4),
           names[i].substr(0, fits), kBlack);
  }
}

Canvas bar_chart(const std::vector<std::pair<std::string, double>>& bars,
                 const ChartLabels& labels) {
  std::vector<std::string> names;
  std::vector<std::vector<double>> parts;
  for (const auto& [name, value] : bars) {
    names.push_back(name);
    parts.push_back({value});
  }
  Canvas c(kChartWidth, kChartHeight);
  PlotArea a;
  double hi = 0;
  for (const auto& [name, value] : bars) hi = std::max(hi, value);
  const Range y = padded(0, hi * 1.1);
  frame(c, a, labels, {0, 1}, y, false);
  const int n = std::max<int>(1, int(bars.size()));
  const int slot = (a.right - a.left) / n;
  for (int i = 0; i < int(bars.size()); ++i) {
    const double v = std::max(0.0, bars[size_t(i)].second);
    const int h = int(std::lround(v / y.span() * (a.bottom - a.top)));
    const int x = a.left + i * slot + slot / 6;
    c.fill_rect(x, a.bottom - h, slot * 2 / 3, h, series_color(size_t(i)));
    const std::string value = tick_label(bars[size_t(i)].second);
    c.text(x, a.bottom - h - 10, value, kBlack);
  }
  bar_labels(c, a, names, slot);
  legend(c, a, names);
  return c;
}

Canvas stacked_bar_chart(const std::vector<std::string>& names,
                         const std::vector<std::string>& segments,
                         const std::vector<std::vector<double>>& parts, const ChartLabels& labels) {
  Canvas c(kChartWidth, kChartHeight);
  PlotArea a;
  double hi = 0;
  for (const auto& bar : parts) {
    double sum = 0;
    for (double v : bar) sum += std::max(0.0, v);
    hi = std::max(hi, sum);
  }
  const Range y = padded(0, hi * 1.1);
  frame(c, a, labels, {0, 1}, y, false);
  const int n = std::max<int>(1, int(names.size()));
  const int slot = (a.right - a.left) / n;
  for (size_t i = 0; i < names.size() && i < parts.size(); ++i) {
    const int x = a.left + int(i) * slot + slot / 6;
    double base = 0;
    for (size_t j = 0; j < parts[i].size(); ++j) {
      const double v = std::max(0.0, parts[i][j]);
      const int y0 = a.bottom - int(std::lround(base / y.span() * (a.bottom - a.top)));
      const int y1 = a.bottom - int(std::lround((base + v) / y.span() * (a.bottom - a.top)));
      c.fill_rect(x, y1, slot * 2 / 3, y0 - y1, series_color(j));
      base += v;
    }
  }
  bar_labels(c, a, names, slot);
  legend(c, a, segments);
  return c;
}

}  // namespace troupe::report
