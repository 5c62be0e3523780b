// Files other processes read: written atomically, appended under a lock, updated under a lock.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace cocode {

// An owned file descriptor.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) noexcept : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd();

    int get() const noexcept { return fd_; }
    bool valid() const noexcept { return fd_ >= 0; }
    int release() noexcept { return std::exchange(fd_, -1); }

  private:
    int fd_ = -1;
};

// The entries of a folder, without throwing: a folder that cannot be read, or stops being
// readable half way, gives what was read (and `ec` says why).
struct FolderEntry {
    std::filesystem::path path;
    bool is_directory = false;
    bool is_regular_file = false;
};
std::vector<FolderEntry> list_folder(const std::filesystem::path& folder, std::error_code& ec);

// Reads a whole file. `limit` bounds what we accept (a bigger file is an error, not a
// truncation).
Result<std::string> read_file(const std::filesystem::path& path,
                              std::size_t limit = std::size_t{64} << 20);

// A file an agent could have written (its output.md, its logs), read as data: never through
// a link, never a FIFO or a device, at most `limit` bytes (more is an error). The readers and
// writers below (tails, appends, locks, reserved files) hold to the same rules.
Result<std::string> read_file_no_follow(const std::filesystem::path& path,
                                        std::size_t limit = std::size_t{64} << 20);

// The file `rel` (relative, without `..`) beneath the folder `root`, read as above with no
// link followed anywhere on the way from `root`: a file in a folder an agent writes (its git
// storage), read by cocode as data.
Result<std::string> read_file_beneath(const std::filesystem::path& root,
                                      const std::filesystem::path& rel,
                                      std::size_t limit = std::size_t{64} << 20);

// The last `bytes` bytes of a file (all of it when shorter): the tail of a log that may be
// hundreds of megabytes. Empty when it cannot be read.
std::string read_file_tail(const std::filesystem::path& path, std::size_t bytes);

// Up to `bytes` bytes of a file from `offset`: what a growing log added since it was last
// read. Empty when there is nothing new or it cannot be read.
std::string read_file_from(const std::filesystem::path& path, std::uint64_t offset,
                           std::size_t bytes);

// What a growing log added from `offset`, at most `bytes` of it, handed to `see` in pieces of
// up to 1 MiB read into one buffer; the bytes seen. 0 when there is nothing new or it cannot
// be read.
std::uint64_t scan_file_from(const std::filesystem::path& path, std::uint64_t offset,
                             std::uint64_t bytes, const std::function<void(std::string_view)>& see);

// What a write promises beyond atomicity. Both fsync the new content before the rename, so
// a power loss leaves the old file or the new one, never a torn or empty one.
enum class Durability {
    full,     // the folder is flushed after the rename too: the new content survives a power loss
    content,  // one flush fewer; a power loss may bring back the old content
    none,     // nothing flushed, for what can be thrown away (a cache): after a power loss the
              // file may be old, empty or gone, and its reader must take that as a miss
};

// Writes `data` to a temporary file beside `path`, fsyncs it and renames it over `path`: a
// reader sees the old content or the new, never a mix.
Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view data,
                               mode_t mode = 0644, Durability durability = Durability::full);

// Creates `path` empty unless it exists; an empty file has nothing to tear.
Result<void> create_file(const std::filesystem::path& path, mode_t mode = 0644);

// Space kept for a record that must be written even when the disk is full: `reserve_file`
// makes `path` `size` bytes of spaces (written and flushed, so its blocks are the file's);
// `overwrite_reserved` later writes `data` over them in place, padded with spaces, and
// flushes it. It needs no new block on a file system that overwrites in place (ext4, xfs,
// tmpfs; not a copy-on-write one). `data` longer than the file is an error.
Result<void> reserve_file(const std::filesystem::path& path, std::size_t size);
Result<void> overwrite_reserved(const std::filesystem::path& path, std::string_view data);

// Cuts the middle out of a file bigger than `head + tail` bytes, in place: its first `head`
// bytes, then `marker` (where `%zu` is the number of bytes cut), then its last `tail` bytes.
Result<void> keep_head_and_tail(const std::filesystem::path& path, std::uint64_t head,
                                std::uint64_t tail, std::string_view marker);

// How long cocode waits for a lock an agent can hold too (its run folder's files, the runs'
// bus: docs/security.md) before it writes past it. An honest holder (the hook) holds one for
// microseconds; an agent that keeps one must not stall its dispatcher — its timeout, its stop
// — nor every other run's events.
inline constexpr std::chrono::milliseconds kAgentLockWait{250};

// Appends one line (a newline is added when missing) in a single write while holding an
// exclusive flock on the file. If a crashed writer left a torn last line, a newline is
// written first so that our line stays whole. With `at_most`, a lock not had by then is
// written past: one O_APPEND write, so the line still lands whole.
Result<void> append_line_locked(const std::filesystem::path& path, std::string_view line,
                                std::optional<std::chrono::milliseconds> at_most = {});

// The folder `rel` (relative, without `..`) beneath the folder `root` — a folder cocode made —
// opened one component at a time without following a link, each made when missing and
// `create`: nothing an agent put on the way (a link to its HOME) leads out of `root`. nullopt
// when a link or a file stands on the way.
Result<std::optional<UniqueFd>> open_folder_beneath(const std::filesystem::path& root,
                                                    const std::filesystem::path& rel, bool create);

// Removes a folder and everything in it, links as links (never followed), also where it was
// made read-only or overlayfs left a folder no one may read.
Result<void> remove_tree(const std::filesystem::path& path);

// A folder of our own under $TMPDIR (else /tmp), 0700, removed with everything in it when the
// object goes.
class TempFolder {
  public:
    static Result<TempFolder> make(const std::string& prefix);
    TempFolder(TempFolder&& other) noexcept : path_(std::exchange(other.path_, {})) {}
    TempFolder& operator=(TempFolder&&) = delete;
    ~TempFolder();
    const std::filesystem::path& path() const { return path_; }

  private:
    TempFolder() = default;
    std::filesystem::path path_;
};

// An exclusive flock on `<path>` (created if needed), held for the object's life.
class FileLock {
  public:
    static Result<FileLock> acquire(const std::filesystem::path& lock_path);
    // Without waiting: nullopt when another holds it.
    static Result<std::optional<FileLock>> try_acquire(const std::filesystem::path& lock_path);
    // Waiting at most `at_most`: nullopt when another still holds it then.
    static Result<std::optional<FileLock>> acquire_within(const std::filesystem::path& lock_path,
                                                          std::chrono::milliseconds at_most);

  private:
    explicit FileLock(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
};

// Read-modify-write of `path` under `lock` (default `<path>.lock`; a file in git's own folders
// takes a name git does not own): `edit` gets the current content (nullopt when the file does
// not exist) and returns the new content, written atomically. `agent_writable`: the file is
// one an agent can write too (a run folder's): it is read without following a link or waiting
// on a FIFO, and its lock is waited on that long at most, then gone past — the file is still
// replaced whole, but a writer holding the lock (the agent itself) may lose its change.
Result<void> update_file_locked(
    const std::filesystem::path& path,
    const std::function<Result<std::string>(const std::optional<std::string>&)>& edit,
    mode_t mode = 0644, Durability durability = Durability::full,
    const std::filesystem::path& lock = {},
    std::optional<std::chrono::milliseconds> agent_writable = {});

}  // namespace cocode
