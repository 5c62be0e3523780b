#include "progress.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace cocode::dispatch_cli {

std::string format_elapsed(long s) {
    if (s < 0) s = 0;
    char buf[32];
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s / 60 % 60);
    else
        std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
    return buf;
}

std::string format_bytes(std::uintmax_t bytes) {
    if (bytes < 1000) return std::to_string(bytes) + " B";
    const char* units[] = {"KB", "MB", "GB", "TB"};
    double value = static_cast<double>(bytes) / 1000.0;
    int unit = 0;
    while (value >= 1000.0 && unit < 3) value /= 1000.0, ++unit;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", value, units[unit]);
    return buf;
}

Progress::Progress(std::FILE* out) : out_(out) {
    const bool tty = ::isatty(::fileno(out)) == 1;
    const char* term = std::getenv("TERM");
    in_place_ = tty && !(term && std::strcmp(term, "dumb") == 0);
    const char* no_color = std::getenv("NO_COLOR");
    color_ = in_place_ && !(no_color && *no_color);
}

Progress::~Progress() { std::fflush(out_); }

std::string Progress::paint(const std::string& line, const std::string& state) const {
    if (!color_) return line;
    const char* code = state == "completed" ? "32"
                       : state == "failed"  ? "31"
                       : state == "running" ? "33"
                                            : nullptr;
    if (!code) return line;
    return "\033[" + std::string(code) + "m" + line + "\033[0m";
}

void Progress::set(const std::string& key, const std::string& line, const std::string& state) {
    if (!in_place_) {
        std::fprintf(out_, "%s\n", line.c_str());
        std::fflush(out_);
        return;
    }
    for (auto& row : rows_) {
        if (row.first == key) {
            row.second = paint(line, state);
            redraw();
            return;
        }
    }
    rows_.emplace_back(key, paint(line, state));
    redraw();
}

void Progress::note(const std::string& line) {
    if (in_place_ && drawn_ > 0) std::fprintf(out_, "\033[%dA\033[J", drawn_), drawn_ = 0;
    std::fprintf(out_, "%s\n", line.c_str());
    if (in_place_) redraw();
    std::fflush(out_);
}

void Progress::redraw() {
    if (drawn_ > 0) std::fprintf(out_, "\033[%dA", drawn_);
    for (const auto& row : rows_) std::fprintf(out_, "\r\033[K%s\n", row.second.c_str());
    drawn_ = static_cast<int>(rows_.size());
    std::fflush(out_);
}

}  // namespace cocode::dispatch_cli
