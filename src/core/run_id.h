// Run ids and the timestamps we write.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace cocode {

using SystemTime = std::chrono::system_clock::time_point;

// `YYYYMMDD-HHMMSSmmm-<pid>-<seq>` in UTC, mmm = milliseconds; seq counts from 1 within this
// process, so two runs made in the same millisecond by one dispatcher still differ.
// (The runner contract writes the four digits after the seconds as a literal "0000"; we put
// the milliseconds there, as docs/protocols.md explains.)
std::string make_run_id(SystemTime now, pid_t pid);
std::string next_run_id();  // now, getpid()

bool is_run_id(std::string_view text);
// The pid of the process that made a run id; 0 when `id` is not one.
pid_t run_id_pid(std::string_view id);

// `2026-11-22T10:04:05.123Z`
std::string format_utc_timestamp(SystemTime time);
// What format_utc_timestamp writes (the milliseconds optional); nullopt for anything else.
std::optional<SystemTime> parse_utc_timestamp(std::string_view text);

}  // namespace cocode
