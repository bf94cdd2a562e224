#pragma once
// The report's charts drawn on a Canvas: line charts with shared axes, bars, stacked bars. Each
// has a title, labelled axes with ticks, and a legend naming every series.

#include <string>
#include <utility>
#include <vector>

#include "experiment/report/canvas.hpp"

namespace troupe::report {

/// A named line: (x, y) points in order.
struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

/// Titles of a chart.
struct ChartLabels {
  std::string title, x_axis, y_axis;
};

inline constexpr int kChartWidth = 800;
inline constexpr int kChartHeight = 480;

/// Every series on one pair of axes spanning all their points; series i in series_color(i).
Canvas line_chart(const std::vector<Series>& series, const ChartLabels& labels);

/// One bar per (name, value), bar i in series_color(i), its value written above it.
Canvas bar_chart(const std::vector<std::pair<std::string, double>>& bars,
                 const ChartLabels& labels);

/// One bar per name, stacked from `segments` (parts[i][j]: bar i's segment j), segment j in
/// series_color(j), with a legend naming the segments.
Canvas stacked_bar_chart(const std::vector<std::string>& names,
                         const std::vector<std::string>& segments,
                         const std::vector<std::vector<double>>& parts, const ChartLabels& labels);

/// Where the plot area lies on every chart (the tests look for drawn pixels there).
struct PlotArea {
  int left = 70, top = 40, right = kChartWidth - 180, bottom = kChartHeight - 50;
};

}  // namespace troupe::report
