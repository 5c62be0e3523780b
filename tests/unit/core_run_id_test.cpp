#include <unistd.h>

#include <ctime>
#include <regex>
#include <set>

#include "core/run_id.h"
#include "test_support.h"

namespace cocode {

TEST(RunId, HasTheRunnerContractShapeInUtc) {
    using namespace std::chrono;
    // 2026-11-22 10:04:05.123 UTC
    SystemTime t =
        sys_days{year{2026} / 11 / 22} + hours{10} + minutes{4} + seconds{5} + milliseconds{123};
    std::string id = make_run_id(t, 4242);
    EXPECT_TRUE(std::regex_match(id, std::regex(R"(20261122-100405123-4242-\d+)"))) << id;
    EXPECT_TRUE(is_run_id(id));
    EXPECT_EQ(format_utc_timestamp(t), "2026-11-22T10:04:05.123Z");
}

TEST(RunId, IsUniqueWithinAMillisecond) {
    SystemTime t = std::chrono::system_clock::now();
    std::set<std::string> ids;
    for (int i = 0; i < 1000; ++i) ids.insert(make_run_id(t, 1));
    EXPECT_EQ(ids.size(), 1000u);
}

TEST(RunId, RecognisesOnlyItsFormat) {
    EXPECT_TRUE(is_run_id(next_run_id()));
    EXPECT_FALSE(is_run_id(""));
    EXPECT_FALSE(is_run_id("20261122-100405-4242-1"));   // no milliseconds
    EXPECT_FALSE(is_run_id("20261122-100405123-4242"));  // no sequence
    EXPECT_FALSE(is_run_id("2026112x-100405123-4242-1"));
    EXPECT_FALSE(is_run_id("20261122-100405123-42a2-1"));
    EXPECT_FALSE(is_run_id("../../etc-100405123-1-1"));
}

TEST(RunId, NamesThePidThatMadeIt) {
    EXPECT_EQ(run_id_pid(make_run_id(std::chrono::system_clock::now(), 4242)), 4242);
    EXPECT_EQ(run_id_pid(next_run_id()), ::getpid());
    EXPECT_EQ(run_id_pid("20261122-100405123-99999999999999-1"), 0);
    EXPECT_EQ(run_id_pid("not-a-run-id"), 0);
}

TEST(Timestamp, ParsesRfc3339AsWrittenAndNothingElse) {
    const auto now =
        std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
    auto back = parse_utc_timestamp(format_utc_timestamp(now));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, now);
    auto whole = parse_utc_timestamp("2026-11-22T10:04:05Z");
    ASSERT_TRUE(whole);
    EXPECT_EQ(format_utc_timestamp(*whole), "2026-11-22T10:04:05.000Z");
    // Fractions of any length (Go writes nanoseconds) and offsets are RFC 3339 too.
    EXPECT_EQ(format_utc_timestamp(*parse_utc_timestamp("2026-11-22T10:04:05.12Z")),
              "2026-11-22T10:04:05.120Z");
    EXPECT_EQ(format_utc_timestamp(*parse_utc_timestamp("2026-11-22T10:04:05.999999999-01:30")),
              "2026-11-22T11:34:05.999Z");
    for (const char* bad :
         {"", "2026-11-22", "2026-11-22T10:04:05", "2026-13-01T00:00:00Z", "2026-11-22T10:04:05.Z",
          "2026-11-22T10:04:05.123Zx", "2026-11-22T10:04:05+0100", "2026-11-22T10:04:05+25:00"})
        EXPECT_FALSE(parse_utc_timestamp(bad)) << bad;
}

TEST(Timestamp, CivilTimeAtTheCalendarsEdgesAsGmtimeGivesIt) {
    // format_utc_timestamp computes the date by arithmetic: it must agree with gmtime_r at
    // leap days, year ends, before the epoch and on each side of a second.
    using namespace std::chrono;
    const std::pair<SystemTime, const char*> cases[] = {
        {sys_days{year{1970} / 1 / 1}, "1970-01-01T00:00:00.000Z"},
        {sys_days{year{1970} / 1 / 1} - milliseconds{1}, "1969-12-31T23:59:59.999Z"},
        {sys_days{year{2024} / 2 / 29} + hours{23} + minutes{59} + seconds{59} + milliseconds{999},
         "2024-02-29T23:59:59.999Z"},
        {sys_days{year{2100} / 3 / 1}, "2100-03-01T00:00:00.000Z"},
        {sys_days{year{2026} / 12 / 31} + hours{12} + microseconds{999999},
         "2026-12-31T12:00:00.999Z"},
    };
    for (const auto& [time, expected] : cases) {
        EXPECT_EQ(format_utc_timestamp(time), expected);
        const std::time_t secs = system_clock::to_time_t(floor<seconds>(time));
        std::tm tm{};
        ASSERT_NE(::gmtime_r(&secs, &tm), nullptr);
        char buf[32];
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
        EXPECT_EQ(format_utc_timestamp(time).substr(0, 19), buf) << expected;
    }
    SystemTime t = sys_days{year{2024} / 2 / 29} + hours{1} + milliseconds{7};
    EXPECT_TRUE(std::regex_match(make_run_id(t, 9), std::regex(R"(20240229-010000007-9-\d+)")));
}

}  // namespace cocode
