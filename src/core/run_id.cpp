#include "core/run_id.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace cocode {
namespace {

std::atomic<unsigned long> run_sequence{0};

struct UtcParts {
    int year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, millis = 0;
};

// Civil time by arithmetic (std::chrono's calendar): gmtime_r would read the time zone files
// first, on the post-commit hook's path for nothing.
UtcParts split_utc(SystemTime time) {
    using namespace std::chrono;
    const auto ms = floor<milliseconds>(time);
    const auto day = floor<days>(ms);
    const year_month_day ymd{day};
    const hh_mm_ss hms{ms - day};
    return {static_cast<int>(ymd.year()),
            static_cast<int>(static_cast<unsigned>(ymd.month())),
            static_cast<int>(static_cast<unsigned>(ymd.day())),
            static_cast<int>(hms.hours().count()),
            static_cast<int>(hms.minutes().count()),
            static_cast<int>(hms.seconds().count()),
            static_cast<int>(hms.subseconds().count())};
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
    std::snprintf(buf, sizeof buf, "%04d%02d%02d-%02d%02d%02d%03d-%ld-%lu", p.year, p.month, p.day,
                  p.hour, p.minute, p.second, p.millis, static_cast<long>(pid), seq);
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

pid_t run_id_pid(std::string_view id) {
    if (!is_run_id(id)) return 0;
    const std::string_view digits = id.substr(19, id.find('-', 19) - 19);
    if (digits.size() > 9) return 0;  // no pid is that long
    pid_t pid = 0;
    for (char c : digits) pid = pid * 10 + (c - '0');
    return pid;
}

std::string format_utc_timestamp(SystemTime time) {
    UtcParts p = split_utc(time);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", p.year, p.month, p.day,
                  p.hour, p.minute, p.second, p.millis);
    return buf;
}

std::optional<SystemTime> parse_utc_timestamp(std::string_view text) {
    // RFC 3339: a date and time, fractions of a second of any length (gopkg.in/yaml.v3 writes
    // nanoseconds), and Z or an offset.
    // YYYY-MM-DDTHH:MM:SS, every field its digits (no signs or spaces, which scanf takes).
    auto number = [&](std::size_t at, std::size_t width) -> int {
        int n = 0;
        for (std::size_t i = at; i < at + width; ++i) {
            if (i >= text.size() || text[i] < '0' || text[i] > '9') return -1;
            n = n * 10 + (text[i] - '0');
        }
        return n;
    };
    if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != 'T' ||
        text[13] != ':' || text[16] != ':')
        return std::nullopt;
    const int y = number(0, 4), mo = number(5, 2), d = number(8, 2), h = number(11, 2),
              mi = number(14, 2), sec = number(17, 2);
    // Only years a nanosecond system_clock holds, whatever the offset.
    if (y < 1678 || y > 2261 || mo < 0 || d < 0 || h < 0 || mi < 0 || sec < 0) return std::nullopt;
    std::string_view rest = text.substr(19);
    long long nanos = 0;
    if (!rest.empty() && rest.front() == '.') {
        std::size_t digits = 1;
        while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
        if (digits == 1 || digits > 10) return std::nullopt;
        std::string fraction(rest.substr(1, digits - 1));
        fraction.resize(9, '0');
        nanos = std::stoll(fraction);
        rest.remove_prefix(digits);
    }
    int offset_minutes = 0;
    if (rest == "Z" || rest == "z") {
        // UTC
    } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
        const std::size_t at = text.size() - rest.size();
        const int oh = number(at + 1, 2), om = number(at + 4, 2);
        if (oh < 0 || om < 0 || oh > 23 || om > 59) return std::nullopt;
        offset_minutes = (rest[0] == '+' ? 1 : -1) * (oh * 60 + om);
    } else {
        return std::nullopt;
    }
    using namespace std::chrono;
    const year_month_day date{year{y}, month{static_cast<unsigned>(mo)},
                              day{static_cast<unsigned>(d)}};
    if (!date.ok() || h > 23 || mi > 59 || sec > 60) return std::nullopt;
    return time_point_cast<system_clock::duration>(sys_days{date} + hours{h} + minutes{mi} +
                                                   seconds{sec} + nanoseconds{nanos} -
                                                   minutes{offset_minutes});
}

}  // namespace cocode
