#include "check/chart.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "check/report.h"
#include "core/markdown.h"
#include "run/usage.h"

namespace cocode::check {

namespace {

// A row's texts never overlap, even at 7 px a character (12 px sans-serif is about 6.5): its
// keys (34 characters at most) end before the PASS bar, the rate's figures ("100% (100%–100%) of
// 9999", 24) before the cost bar, the cost ("$1234.56") before the picture's edge.
constexpr int kWidth = 960;
constexpr int kTop = 64;     // the first row's top
constexpr int kRow = 28;     // a row's height
constexpr int kLabelX = 12;  // the row's keys
constexpr int kPassX = 260;  // where 0 % is
constexpr int kPassW = 300;  // 100 % wide
constexpr int kCostX = 760;  // where $0 is
constexpr int kCostW = 120;  // the dearest PASS

// Text for an SVG element's content or attribute.
std::string escaped(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                // Control characters are no text of a picture.
                if (static_cast<unsigned char>(c) < 0x20)
                    out += ' ';
                else
                    out += c;
        }
    }
    return out;
}

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return text;
}

std::string percent(double rate) {
    return std::to_string(static_cast<int>(std::lround(rate * 100))) + "%";
}

// At most `max` characters of a row's name, cut with an ellipsis (UTF-8 kept whole).
std::string cut(const std::string& text, std::size_t max) {
    if (text.size() <= max) return text;
    std::size_t end = max - 1;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    return text.substr(0, end) + "\u2026";
}

std::string row_svg(const ReportRow& row, int index, double dearest) {
    const int y = kTop + index * kRow;
    const int mid = y + 9;
    std::string out = "<g class=\"row\">\n";
    out += "<text x=\"" + std::to_string(kLabelX) + "\" y=\"" + std::to_string(mid + 4) + "\">" +
           escaped(cut(row.key(), 34)) + "</text>\n";
    const auto rate = row.pass_rate();
    const auto interval = row.pass_interval();
    if (rate && interval) {
        out += "<rect class=\"pass\" x=\"" + std::to_string(kPassX) + "\" y=\"" +
               std::to_string(y + 2) + "\" width=\"" + number(*rate * kPassW) +
               "\" height=\"14\"><title>" + escaped(row.key()) + ": PASS " + percent(*rate) +
               " of " + std::to_string(row.judged) + " judged, 95% interval " +
               percent(interval->low) + " to " + percent(interval->high) + "</title></rect>\n";
        const std::string low = number(kPassX + interval->low * kPassW);
        const std::string high = number(kPassX + interval->high * kPassW);
        const std::string m = std::to_string(mid);
        out += "<path class=\"interval\" d=\"M" + low + " " + m + "H" + high + "M" + low + " " +
               std::to_string(mid - 6) + "V" + std::to_string(mid + 6) + "M" + high + " " +
               std::to_string(mid - 6) + "V" + std::to_string(mid + 6) + "\"/>\n";
        out += "<text x=\"" + std::to_string(kPassX + kPassW + 10) + "\" y=\"" +
               std::to_string(mid + 4) + "\">" + percent(*rate) + " (" + percent(interval->low) +
               "\u2013" + percent(interval->high) + ") of " + std::to_string(row.judged) +
               "</text>\n";
    } else {
        out += "<text class=\"none\" x=\"" + std::to_string(kPassX) + "\" y=\"" +
               std::to_string(mid + 4) + "\">no verdict yet</text>\n";
    }
    if (const auto cost = row.cost_per_pass()) {
        const double width = dearest > 0 ? *cost / dearest * kCostW : 0;
        out += "<rect class=\"cost\" x=\"" + std::to_string(kCostX) + "\" y=\"" +
               std::to_string(y + 2) + "\" width=\"" + number(width) + "\" height=\"14\"><title>" +
               escaped(row.key()) + ": " + run::format_cost(*cost) + " per PASS</title></rect>\n";
        out += "<text x=\"" + number(kCostX + width + 6) + "\" y=\"" + std::to_string(mid + 4) +
               "\">" + escaped(run::format_cost(*cost)) + "</text>\n";
    } else {
        // Unpriced (a script's run), not free: the dash every other view shows.
        out += "<text class=\"none\" x=\"" + std::to_string(kCostX) + "\" y=\"" +
               std::to_string(mid + 4) + "\">\u2013</text>\n";
    }
    return out + "</g>\n";
}

}  // namespace

std::string scorecard_svg(const Scorecard& card) {
    std::string by;
    for (auto d : card.by) by += (by.empty() ? "" : ", ") + std::string(dimension_name(d));
    double dearest = 0;
    for (const auto& row : card.rows)
        if (auto cost = row.cost_per_pass()) dearest = std::max(dearest, *cost);
    // Runs the agent did not finish (interrupted, never started) are in no rate: said under the
    // rows, as the text and Markdown reports say it.
    const std::string apart = apart_note(card.total);
    const int rows_end = kTop + static_cast<int>(card.rows.size()) * kRow;
    const int height = rows_end + 16 + (apart.empty() ? 0 : 20);
    const std::string title = "PASS rate with its 95% interval, and cost per PASS, by " + by;
    std::string out =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) +
        "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(kWidth) +
        " " + std::to_string(height) +
        "\" role=\"img\" aria-labelledby=\"title\" font-family=\"sans-serif\" font-size=\"12\">\n"
        "<title id=\"title\">" +
        escaped(title) +
        "</title>\n"
        "<style>.pass{fill:#2f7d32}.cost{fill:#8a6d1f}.interval{stroke:#111;stroke-width:1.5;"
        "fill:none}.none{fill:#666}.axis{stroke:#bbb}text{fill:#111}</style>\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
        "<text x=\"" +
        std::to_string(kLabelX) + "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" +
        escaped(title) + "</text>\n";
    // The PASS axis: 0, 50 and 100 %.
    for (int tick : {0, 50, 100}) {
        const std::string x = std::to_string(kPassX + tick * kPassW / 100);
        out += "<line class=\"axis\" x1=\"" + x + "\" y1=\"" + std::to_string(kTop - 8) +
               "\" x2=\"" + x + "\" y2=\"" + std::to_string(rows_end + 4) + "\"/>\n";
        out += "<text x=\"" + x + "\" y=\"" + std::to_string(kTop - 12) +
               "\" text-anchor=\"middle\">" + std::to_string(tick) + "%</text>\n";
    }
    out += "<text x=\"" + std::to_string(kPassX) + "\" y=\"40\">PASS rate</text>\n";
    out += "<text x=\"" + std::to_string(kCostX) + "\" y=\"40\">cost per PASS</text>\n";
    for (std::size_t i = 0; i < card.rows.size(); ++i)
        out += row_svg(card.rows[i], static_cast<int>(i), dearest);
    if (!apart.empty())
        out += "<text class=\"none\" x=\"" + std::to_string(kLabelX) + "\" y=\"" +
               std::to_string(rows_end + 16) + "\">" + escaped(apart) + "</text>\n";
    return out + "</svg>\n";
}

namespace {

constexpr int kBarCells = 20;

// The PASS rate as 20 cells: full to the interval's lower bound, shaded to its upper bound,
// empty after; the cell of the rate itself marked.
std::string rate_bar(double rate, const RateInterval& interval) {
    auto cell = [](double x) {
        return std::clamp(static_cast<int>(x * kBarCells + 0.5), 0, kBarCells);
    };
    const int low = cell(interval.low);
    const int high = cell(interval.high);
    const int mark = std::min(cell(rate), kBarCells - 1);
    std::string out;
    for (int i = 0; i < kBarCells; ++i) {
        if (i == mark && rate > 0)
            out += "\u2588";  // full block: the rate
        else if (i < low)
            out += "\u2593";  // dark shade: surely passed
        else if (i < high)
            out += "\u2591";  // light shade: the interval
        else
            out += "\u00b7";  // middle dot: beyond it
    }
    return out;
}

}  // namespace

std::string scorecard_markdown(const Scorecard& card) {
    std::string by;
    for (auto d : card.by) by += (by.empty() ? "" : ", ") + std::string(dimension_name(d));
    std::string out = "### cocode scorecard, by " + by + "\n\n|";
    for (auto d : card.by) out += " " + std::string(dimension_name(d)) + " |";
    out += " runs | PASS rate (95 % interval) | per PASS | merged | ready in |\n|";
    for (std::size_t i = 0; i < card.by.size(); ++i) out += " --- |";
    out += " ---: | --- | ---: | ---: | ---: |\n";
    auto line = [&](const ReportRow& row, bool total) {
        out += "|";
        for (std::size_t i = 0; i < card.by.size(); ++i) {
            const std::string key =
                total ? (i == 0 ? "total" : "") : (i < row.keys.size() ? row.keys[i] : "");
            out += " " + (total && i == 0 ? std::string("**total**") : markdown_text(key)) + " |";
        }
        out += " " + std::to_string(row.runs) + " |";
        const auto rate = row.pass_rate();
        const auto interval = row.pass_interval();
        if (rate && interval) {
            char figures[64];
            std::snprintf(figures, sizeof figures, " %.0f %% (%.0f\u2013%.0f) of %d", *rate * 100,
                          interval->low * 100, interval->high * 100, row.judged);
            out += " `" + rate_bar(*rate, *interval) + "`" + figures + " |";
        } else {
            out += " \u2013 |";
        }
        const auto cost = row.cost_per_pass();
        out += " " + (cost ? markdown_text(run::format_cost(*cost)) : std::string("\u2013")) + " |";
        const int decided = row.merged + row.closed;
        out += " " +
               (decided ? std::to_string(row.merged) + "/" + std::to_string(decided)
                        : std::string("\u2013")) +
               " |";
        out += " " +
               (row.median_ready_seconds ? markdown_text(format_seconds(*row.median_ready_seconds))
                                         : std::string("\u2013")) +
               " |\n";
    };
    for (const auto& row : card.rows) line(row, false);
    line(card.total, true);
    out +=
        "\n`\u2593` surely passed \u00b7 `\u2591` the 95 % interval (Wilson) \u00b7 "
        "`\u2588` the rate; merged: of the pull requests decided (merged or closed)\n";
    if (const std::string apart = apart_note(card.total); !apart.empty())
        out += "\n" + apart + "\n";
    return out;
}

}  // namespace cocode::check
