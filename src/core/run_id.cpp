#include "core/run_id.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>

namespace cocode {
namespace {

std::atomic<unsigned long> run_sequence{0};

struct UtcParts {
    std::tm tm{};
    int millis = 0;
};

UtcParts split_utc(SystemTime time) {
    using namespace std::chrono;
    auto since_epoch = time.time_since_epoch();
    auto secs = floor<seconds>(since_epoch);
    UtcParts parts;
    parts.millis = static_cast<int>(duration_cast<milliseconds>(since_epoch - secs).count());
    std::time_t t = static_cast<std::time_t>(secs.count());
    ::gmtime_r(&t, &parts.tm);
    return parts;
}

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

std::string make_run_id(SystemTime now, pid_t pid) {
    UtcParts p = split_utc(now);
    unsigned long seq = ++run_sequence;
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d%02d%02d-%02d%02d%02d%03d-%ld-%lu", p.tm.tm_year + 1900,
                  p.tm.tm_mon + 1, p.tm.tm_mday, p.tm.tm_hour, p.tm.tm_min, p.tm.tm_sec, p.millis,
                  static_cast<long>(pid), seq);
    return buf;
}

std::string next_run_id() { return make_run_id(std::chrono::system_clock::now(), ::getpid()); }

bool is_run_id(std::string_view text) {
    // 8 digits, '-', 9 digits, '-', pid, '-', seq
    if (text.size() < 8 + 1 + 9 + 1 + 1 + 1 + 1) return false;
    if (!all_digits(text.substr(0, 8)) || text[8] != '-') return false;
    if (!all_digits(text.substr(9, 9)) || text[18] != '-') return false;
    std::string_view rest = text.substr(19);
    auto dash = rest.find('-');
    if (dash == std::string_view::npos) return false;
    return all_digits(rest.substr(0, dash)) && all_digits(rest.substr(dash + 1));
}

std::string format_utc_timestamp(SystemTime time) {
    UtcParts p = split_utc(time);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", p.tm.tm_year + 1900,
                  p.tm.tm_mon + 1, p.tm.tm_mday, p.tm.tm_hour, p.tm.tm_min, p.tm.tm_sec, p.millis);
    return buf;
}

}  // namespace cocode
