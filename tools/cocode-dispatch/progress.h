// How run and status --watch show runs as they change: on a terminal, one line per run
// rewritten in place; otherwise (a pipe, a CI log) one plain line per change. NO_COLOR
// (https://no-color.org) turns colour off; TERM=dumb turns the in-place block off.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace cocode::dispatch_cli {

// "0m07s", "12m30s", "1h05m": a run's elapsed time in a table.
std::string format_elapsed(long seconds);
// "0 B", "812 B", "4.2 KB", "12.0 MB", "1.3 GB".
std::string format_bytes(std::uintmax_t bytes);

class Progress {
  public:
    explicit Progress(std::FILE* out);
    ~Progress();
    bool in_place() const { return in_place_; }
    // Sets the line for `key` (a run id). `state` picks the colour: running, completed, failed.
    void set(const std::string& key, const std::string& line, const std::string& state);
    // A line that is not a run's (a notice): printed above the block.
    void note(const std::string& line);

  private:
    void redraw();
    std::string paint(const std::string& line, const std::string& state) const;
    std::FILE* out_;
    bool in_place_ = false;
    bool color_ = false;
    std::vector<std::pair<std::string, std::string>> rows_;  // key, painted line
    int drawn_ = 0;
};

}  // namespace cocode::dispatch_cli
