// `report --svg FILE` (docs/report.md, "The chart"): the scorecard drawn as an SVG picture —
// per row, the PASS rate as a bar with its 95 % interval as a whisker, and the cost per PASS as
// a bar of its own — readable without JavaScript (no script, no link, no font to fetch), every
// word of it text that was escaped.
#pragma once

#include <string>

#include "check/scorecard.h"

namespace cocode::check {

std::string scorecard_svg(const Scorecard& card);

// `report --markdown`: the same chart as a Markdown table, for a GitHub Actions step summary
// (which shows no SVG of a run's own): per row the runs, the PASS rate as a bar of text — solid
// to the interval's lower bound, shaded across the interval, the rate marked — with its
// figures, the cost per PASS, the merged pull requests and the median time to READY. Every
// word that came from a run (an agent's or a model's name) is escaped: it reads as the
// characters it is, never as Markdown or HTML.
std::string scorecard_markdown(const Scorecard& card);

}  // namespace cocode::check
