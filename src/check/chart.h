// `report --svg FILE` (docs/report.md, "The chart"): the scorecard drawn as an SVG picture —
// per row, the PASS rate as a bar with its 95 % interval as a whisker, and the cost per PASS as
// a bar of its own — readable without JavaScript (no script, no link, no font to fetch), every
// word of it text that was escaped.
#pragma once

#include <string>

#include "check/scorecard.h"

namespace cocode::check {

std::string scorecard_svg(const Scorecard& card);

}  // namespace cocode::check
