#include "proc/process_tree.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "core/files.h"

namespace cocode {
namespace fs = std::filesystem;

namespace {

bool read_stat(pid_t pid, ProcessInfo& info) {
    auto text = read_file("/proc/" + std::to_string(pid) + "/stat", 4096);
    if (!text) return false;
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses; the last ')' ends it.
    std::size_t close = text->rfind(')');
    if (close == std::string::npos || close + 2 >= text->size()) return false;
    std::istringstream rest(text->substr(close + 2));
    info.pid = pid;
    rest >> info.state >> info.ppid >> info.pgid;
    // Fields 6 to 21 (session … itrealvalue), then 22: starttime.
    std::string skip;
    for (int field = 6; field <= 21 && rest; ++field) rest >> skip;
    rest >> info.start;
    return static_cast<bool>(rest);
}

bool environment_has(pid_t pid, std::string_view entry) {
    auto text = read_file("/proc/" + std::to_string(pid) + "/environ", std::size_t{4} << 20);
    if (!text) return false;
    std::string_view env = *text;
    while (!env.empty()) {
        std::size_t end = env.find('\0');
        if (env.substr(0, end) == entry) return true;
        if (end == std::string_view::npos) break;
        env.remove_prefix(end + 1);
    }
    return false;
}

}  // namespace

std::optional<ProcessInfo> process_info(pid_t pid) {
    ProcessInfo info;
    if (!read_stat(pid, info)) return std::nullopt;
    return info;
}

std::vector<ProcessInfo> list_processes() {
    std::vector<ProcessInfo> out;
    DIR* dir = ::opendir("/proc");
    if (!dir) return out;
    while (dirent* entry = ::readdir(dir)) {
        char* end = nullptr;
        long pid = std::strtol(entry->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') continue;
        ProcessInfo info;
        if (read_stat(static_cast<pid_t>(pid), info)) out.push_back(info);
    }
    ::closedir(dir);
    return out;
}

std::string boot_id() {
    auto text = read_file("/proc/sys/kernel/random/boot_id", 256);
    if (!text) return {};
    std::string id = *text;
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    return id;
}

namespace {

// pidfs's magic number (include/uapi/linux/magic.h; Debian 12's headers predate it).
constexpr long kPidfsMagic = 0x50494446;

// A pidfd for `pid`, -1 when there is none. While it is open the number cannot go to another
// process, so what is read of /proc/<pid> meanwhile is of the process it names.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    return -1;
#endif
}

std::uint64_t inode_of_pidfd(int fd) {
    struct statfs fs {};
    struct stat st {};
    if (::fstatfs(fd, &fs) != 0 || static_cast<long>(fs.f_type) != kPidfsMagic) return 0;
    if (::fstat(fd, &st) != 0) return 0;
    return static_cast<std::uint64_t>(st.st_ino);
}

// The same process as stamped, by the marks both carry: the start time, and the pidfs inode
// where both know it (a recycled pid's start can fall in its first owner's clock tick).
bool same_process(const ProcessStamp& stamp, std::uint64_t start, std::uint64_t ino) {
    if (start != stamp.start) return false;
    return stamp.ino == 0 || ino == 0 || ino == stamp.ino;
}

}  // namespace

std::uint64_t pidfs_inode(pid_t pid) {
    const int fd = open_pidfd(pid);
    if (fd < 0) return 0;
    const std::uint64_t ino = inode_of_pidfd(fd);
    ::close(fd);
    return ino;
}

namespace {

// A process as it is now (a zombie too), with its pidfs inode (0: not known), read while a
// pidfd holds its number; nullopt when there is none.
std::optional<std::pair<ProcessInfo, std::uint64_t>> observe(pid_t pid) {
    const int fd = open_pidfd(pid);
    auto info = process_info(pid);
    const std::uint64_t ino = fd >= 0 && info ? inode_of_pidfd(fd) : 0;
    if (fd >= 0) ::close(fd);
    if (!info) return std::nullopt;
    return std::make_pair(*info, ino);
}

}  // namespace

ProcessStamp stamp_of(pid_t pid) {
    const auto seen = observe(pid);
    if (!seen || seen->first.state == 'Z') return {};
    return {pid, seen->first.start, seen->second};
}

bool is_alive(const ProcessStamp& stamp, bool legacy_pid_only) {
    if (stamp.pid <= 0) return false;
    const ProcessStamp now = stamp_of(stamp.pid);
    if (now.pid == 0) return false;
    if (stamp.start == 0) return legacy_pid_only;
    return same_process(stamp, now.start, now.ino);
}

bool group_is_ours(const ProcessStamp& leader) {
    if (leader.pid <= 0 || leader.start == 0) return false;
    if (const auto seen = observe(leader.pid))
        return same_process(leader, seen->first.start, seen->second);
    // The leader is gone. Its number stays taken while its group has members, so a group of
    // that number is still the one it led.
    return group_alive(leader.pid);
}

std::vector<pid_t> run_processes(const RunMarks& marks) {
    const pid_t self = ::getpid();
    std::vector<ProcessInfo> all = list_processes();
    const pid_t pgid = group_is_ours(marks.leader) ? marks.leader.pid : 0;
    std::set<pid_t> members;
    for (const auto& p : all) {
        if (p.state == 'Z' || p.pid == self) continue;
        if ((pgid > 0 && p.pgid == pgid) ||
            (!marks.tag.empty() && environment_has(p.pid, marks.tag)))
            members.insert(p.pid);
    }
    // Descendants, to a fixed point (parents may be listed after their children).
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& p : all) {
            if (p.state == 'Z' || p.pid == self || members.count(p.pid)) continue;
            if (members.count(p.ppid)) grew = members.insert(p.pid).second || grew;
        }
    }
    return {members.begin(), members.end()};
}

bool group_alive(pid_t pgid) { return pgid > 0 && (::kill(-pgid, 0) == 0 || errno == EPERM); }

std::optional<std::vector<pid_t>> own_children() {
    std::vector<pid_t> out;
    std::error_code ec;
    auto tasks = list_folder("/proc/self/task", ec);
    if (ec) return std::nullopt;
    for (const auto& task : tasks) {
        std::ifstream in(task.path / "children");
        if (!in) return std::nullopt;  // CONFIG_PROC_CHILDREN is off
        for (pid_t pid; in >> pid;) out.push_back(pid);
    }
    return out;
}

int signal_run(const RunMarks& marks, int signal) {
    int sent = 0;
    if (group_is_ours(marks.leader) && ::kill(-marks.leader.pid, signal) == 0) ++sent;
    for (pid_t pid : run_processes(marks))
        if (::kill(pid, signal) == 0) ++sent;
    return sent;
}

void stop_run_blocking(const RunMarks& marks, std::chrono::milliseconds grace) {
    if (run_processes(marks).empty()) return;
    signal_run(marks, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < deadline) {
        if (run_processes(marks).empty()) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (int round = 0; round < 20 && !run_processes(marks).empty(); ++round) {
        signal_run(marks, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

bool become_subreaper() { return ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }

}  // namespace cocode
