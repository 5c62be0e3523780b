#include "core/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cocode {
namespace fs = std::filesystem;

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

UniqueFd::~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
}

namespace {

std::string describe(std::string_view verb, const fs::path& path) {
    std::string what(verb);
    what += " ";
    what += path.string();
    return what;
}

// Writes all of `data`: at `offset` when given (pwrite), else at the file's position.
Result<void> write_all(int fd, std::string_view data, const fs::path& path,
                       std::optional<std::uint64_t> offset = std::nullopt) {
    while (!data.empty()) {
        ssize_t n = offset ? ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(*offset))
                           : ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return Error::from_errno(describe("cannot write", path), errno);
        }
        if (n == 0) return Error::general(describe("cannot write", path) + ": nothing written");
        data.remove_prefix(static_cast<std::size_t>(n));
        if (offset) *offset += static_cast<std::uint64_t>(n);
    }
    return {};
}

void fsync_parent(const fs::path& path) {
    fs::path dir = path.parent_path();
    if (dir.empty()) dir = ".";
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.valid()) ::fsync(fd.get());
}

// Opens a file of the run's (or anything an agent's folder may hold) as data: the last
// component never followed when it is a link, a FIFO never waited on, anything but a regular
// file refused. Invalid when it cannot (errno says why: ELOOP for a link).
UniqueFd open_regular_at(int at, const fs::path& path, int flags, mode_t mode = 0) {
    UniqueFd fd(::openat(at, path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
    struct stat st {};
    if (!fd.valid()) return fd;
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return UniqueFd();
    }
    // Back to blocking I/O for what follows (a regular file never blocks anyway).
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    return fd;
}

UniqueFd open_regular(const fs::path& path, int flags, mode_t mode = 0) {
    return open_regular_at(AT_FDCWD, path, flags, mode);
}

// All of an open file, at most `limit` bytes (more is an error).
Result<std::string> read_all(const UniqueFd& fd, const fs::path& path, std::size_t limit) {
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return Error::from_errno(describe("cannot read", path), errno);
        }
        if (n == 0) break;
        if (out.size() + static_cast<std::size_t>(n) > limit)
            return Error::general(path.string() + ": larger than " + std::to_string(limit) +
                                  " bytes");
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

}  // namespace

Result<std::string> read_file_no_follow(const fs::path& path, std::size_t limit) {
    UniqueFd fd = open_regular(path, O_RDONLY);
    if (!fd.valid()) return Error::from_errno(describe("cannot read", path), errno);
    return read_all(fd, path, limit);
}

Result<std::string> read_file_beneath(const fs::path& root, const fs::path& rel,
                                      std::size_t limit) {
    const fs::path path = root / rel;
    auto folder = open_folder_beneath(root, rel.parent_path(), false);
    if (!folder) return std::move(folder).error();
    if (!*folder) return Error::general(describe("cannot read", path) + ": a link on the way");
    UniqueFd fd = open_regular_at((*folder)->get(), rel.filename(), O_RDONLY);
    if (!fd.valid()) return Error::from_errno(describe("cannot read", path), errno);
    return read_all(fd, path, limit);
}

Result<std::string> read_file(const fs::path& path, std::size_t limit) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return Error::from_errno(describe("cannot read", path), errno);
    return read_all(fd, path, limit);
}

std::string read_file_tail(const fs::path& path, std::size_t bytes) {
    UniqueFd fd = open_regular(path, O_RDONLY);
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return "";
    const auto size = static_cast<std::size_t>(st.st_size);
    const std::size_t take = std::min(size, bytes);
    std::string out(take, '\0');
    ssize_t n = ::pread(fd.get(), out.data(), take, static_cast<off_t>(size - take));
    out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return out;
}

std::string read_file_from(const fs::path& path, std::uint64_t offset, std::size_t bytes) {
    UniqueFd fd = open_regular(path, O_RDONLY);
    if (!fd.valid()) return "";
    std::string out(bytes, '\0');
    ssize_t n = ::pread(fd.get(), out.data(), bytes, static_cast<off_t>(offset));
    out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return out;
}

std::uint64_t scan_file_from(const fs::path& path, std::uint64_t offset, std::uint64_t bytes,
                             const std::function<void(std::string_view)>& see) {
    UniqueFd fd = open_regular(path, O_RDONLY);
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return 0;
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size <= offset) return 0;
    // Read into one buffer, left uninitialised, that every piece reuses: no bigger than what
    // is there to read.
    const std::size_t kPiece = static_cast<std::size_t>(
        std::min<std::uint64_t>({std::uint64_t{1} << 20, size - offset, bytes}));
    if (kPiece == 0) return 0;
    const std::unique_ptr<char[]> buffer(new char[kPiece]);
    std::uint64_t seen = 0;
    while (seen < bytes) {
        const std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, bytes - seen));
        const ssize_t n = ::pread(fd.get(), buffer.get(), want, static_cast<off_t>(offset + seen));
        if (n <= 0) break;
        see(std::string_view(buffer.get(), static_cast<std::size_t>(n)));
        seen += static_cast<std::uint64_t>(n);
    }
    return seen;
}

Result<void> write_file_atomic(const fs::path& path, std::string_view data, mode_t mode,
                               Durability durability) {
    fs::path dir = path.parent_path();
    std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
    UniqueFd fd(::mkostemp(tmpl.data(), O_CLOEXEC));
    if (!fd.valid()) return Error::from_errno(describe("cannot create a file beside", path), errno);

    auto fail = [&](Error error) -> Result<void> {
        ::unlink(tmpl.c_str());
        return error;
    };
    if (auto written = write_all(fd.get(), data, tmpl); !written) return fail(written.error());
    if (::fchmod(fd.get(), mode) != 0)
        return fail(Error::from_errno(describe("cannot chmod", tmpl), errno));
    if (durability != Durability::none && ::fsync(fd.get()) != 0)
        return fail(Error::from_errno(describe("cannot fsync", tmpl), errno));
    if (::close(fd.release()) != 0)
        return fail(Error::from_errno(describe("cannot close", tmpl), errno));
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        return fail(Error::from_errno(describe("cannot replace", path), errno));
    }
    if (durability == Durability::full) fsync_parent(path);
    return {};
}

Result<void> create_file(const fs::path& path, mode_t mode) {
    UniqueFd fd = open_regular(path, O_WRONLY | O_CREAT, mode);
    if (!fd.valid()) return Error::from_errno(describe("cannot create", path), errno);
    return {};
}

std::vector<FolderEntry> list_folder(const fs::path& folder, std::error_code& ec) {
    std::vector<FolderEntry> out;
    for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
        std::error_code type_error;
        FolderEntry entry{it->path(), it->is_directory(type_error), false};
        entry.is_regular_file = it->is_regular_file(type_error);
        out.push_back(std::move(entry));
    }
    return out;
}

Result<void> reserve_file(const fs::path& path, std::size_t size) {
    UniqueFd fd = open_regular(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!fd.valid()) return Error::from_errno(describe("cannot create", path), errno);
    if (auto ok = write_all(fd.get(), std::string(size, ' '), path); !ok) return ok;
    if (::fsync(fd.get()) != 0) return Error::from_errno(describe("cannot flush", path), errno);
    return {};
}

Result<void> overwrite_reserved(const fs::path& path, std::string_view data) {
    UniqueFd fd = open_regular(path, O_WRONLY);
    if (!fd.valid()) return Error::from_errno(describe("cannot open", path), errno);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Error::from_errno(describe("cannot stat", path), errno);
    const auto size = static_cast<std::size_t>(st.st_size);
    if (data.size() > size)
        return Error::general(describe("cannot write", path) + ": " + std::to_string(data.size()) +
                              " bytes do not fit the " + std::to_string(size) + " kept for them");
    // Space kept is a few KiB; a file grown past that was not kept by us (a run folder is its
    // agent's to write): never padded to its size.
    if (size > (std::size_t{1} << 20))
        return Error::general(describe("cannot write", path) + ": " + std::to_string(size) +
                              " bytes there, not the space kept");
    std::string padded(data);
    padded.resize(size, ' ');
    if (auto ok = write_all(fd.get(), padded, path, 0); !ok) return ok;
    if (::fdatasync(fd.get()) != 0) return Error::from_errno(describe("cannot flush", path), errno);
    return {};
}

Result<void> keep_head_and_tail(const fs::path& path, std::uint64_t head, std::uint64_t tail,
                                std::string_view marker) {
    UniqueFd fd = open_regular(path, O_RDWR);
    if (!fd.valid()) return Error::from_errno(describe("cannot open", path), errno);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Error::from_errno(describe("cannot stat", path), errno);
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size <= head + tail) return {};
    std::string note(marker);
    if (auto at = note.find("%zu"); at != std::string::npos)
        note.replace(at, 3, std::to_string(size - head - tail));
    if (auto ok = write_all(fd.get(), note, path, head); !ok) return ok;
    // The tail moves back, in order: each chunk is read before anything is written over it.
    std::vector<char> buffer(std::size_t{1} << 20);
    const std::uint64_t from = size - tail, to = head + note.size();
    for (std::uint64_t moved = 0; moved < tail;) {
        const auto want =
            static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), tail - moved));
        ssize_t r = ::pread(fd.get(), buffer.data(), want, static_cast<off_t>(from + moved));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return Error::from_errno(describe("cannot read", path), errno);
        const std::string_view chunk(buffer.data(), static_cast<std::size_t>(r));
        if (auto ok = write_all(fd.get(), chunk, path, to + moved); !ok) return ok;
        moved += static_cast<std::uint64_t>(r);
    }
    if (::ftruncate(fd.get(), static_cast<off_t>(to + tail)) != 0)
        return Error::from_errno(describe("cannot truncate", path), errno);
    return {};
}

namespace {

// flock(LOCK_EX) on `fd`, waiting at most `at_most` when given: false when it was not had by
// then. The wait backs off from 1 ms to 20 ms: an honest holder lets go within microseconds.
Result<bool> lock_within(int fd, const fs::path& path,
                         std::optional<std::chrono::milliseconds> at_most) {
    if (!at_most) {
        while (::flock(fd, LOCK_EX) != 0)
            if (errno != EINTR) return Error::from_errno(describe("cannot lock", path), errno);
        return true;
    }
    const auto until = std::chrono::steady_clock::now() + *at_most;
    for (auto pause = std::chrono::milliseconds(1);;
         pause = std::min(pause * 2, decltype(pause)(20))) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return Error::from_errno(describe("cannot lock", path), errno);
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(pause);
    }
}

}  // namespace

Result<void> append_line_locked(const fs::path& path, std::string_view line,
                                std::optional<std::chrono::milliseconds> at_most) {
    // Read and write: the last byte is read through the same descriptor (one open, not two).
    // Never through a link: a run folder's files are the agent's to replace.
    UniqueFd fd = open_regular(path, O_RDWR | O_APPEND | O_CREAT, 0644);
    if (!fd.valid()) return Error::from_errno(describe("cannot open", path), errno);
    if (auto locked = lock_within(fd.get(), path, at_most); !locked)
        return std::move(locked).error();
    std::string record;
    struct stat st {};
    if (::fstat(fd.get(), &st) == 0 && st.st_size > 0) {
        char last = '\n';
        if (::pread(fd.get(), &last, 1, st.st_size - 1) == 1 && last != '\n') record += '\n';
    }
    record += line;
    if (record.empty() || record.back() != '\n') record += '\n';
    return write_all(fd.get(), record, path);  // closing the descriptor drops the lock
}

Result<FileLock> FileLock::acquire(const fs::path& lock_path) {
    UniqueFd fd = open_regular(lock_path, O_RDWR | O_CREAT, 0644);
    if (!fd.valid()) return Error::from_errno(describe("cannot open", lock_path), errno);
    while (::flock(fd.get(), LOCK_EX) != 0) {
        if (errno != EINTR) return Error::from_errno(describe("cannot lock", lock_path), errno);
    }
    return FileLock(std::move(fd));
}

Result<std::optional<FileLock>> FileLock::acquire_within(const fs::path& lock_path,
                                                         std::chrono::milliseconds at_most) {
    UniqueFd fd = open_regular(lock_path, O_RDWR | O_CREAT, 0644);
    if (!fd.valid()) return Error::from_errno(describe("cannot open", lock_path), errno);
    auto locked = lock_within(fd.get(), lock_path, at_most);
    if (!locked) return std::move(locked).error();
    if (!*locked) return std::optional<FileLock>();
    return std::optional<FileLock>(FileLock(std::move(fd)));
}

Result<std::optional<FileLock>> FileLock::try_acquire(const fs::path& lock_path) {
    UniqueFd fd = open_regular(lock_path, O_RDWR | O_CREAT, 0644);
    if (!fd.valid()) return Error::from_errno(describe("cannot open", lock_path), errno);
    while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) return std::optional<FileLock>();
        if (errno != EINTR) return Error::from_errno(describe("cannot lock", lock_path), errno);
    }
    return std::optional<FileLock>(FileLock(std::move(fd)));
}

Result<void> update_file_locked(
    const fs::path& path,
    const std::function<Result<std::string>(const std::optional<std::string>&)>& edit, mode_t mode,
    Durability durability, const fs::path& lock_path,
    std::optional<std::chrono::milliseconds> agent_writable) {
    const fs::path lock_file = lock_path.empty() ? fs::path(path.string() + ".lock") : lock_path;
    std::optional<FileLock> held;
    if (agent_writable) {
        auto lock = FileLock::acquire_within(lock_file, *agent_writable);
        if (!lock) return std::move(lock).error();
        held = std::move(*lock);
    } else {
        auto lock = FileLock::acquire(lock_file);
        if (!lock) return std::move(lock).error();
        held = std::move(*lock);
    }
    std::optional<std::string> current;
    std::error_code ec;
    const bool there = agent_writable
                           ? fs::symlink_status(path, ec).type() != fs::file_type::not_found
                           : fs::exists(path, ec);
    if (there) {
        auto content =
            agent_writable ? read_file_no_follow(path, std::size_t{16} << 20) : read_file(path);
        if (!content) return std::move(content).error();
        current = std::move(content).value();
    }
    auto next = edit(current);
    if (!next) return std::move(next).error();
    return write_file_atomic(path, *next, mode, durability);
}

Result<std::optional<UniqueFd>> open_folder_beneath(const fs::path& root, const fs::path& rel,
                                                    bool create) {
    UniqueFd at(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!at.valid()) return Error::from_errno(describe("cannot open", root), errno);
    fs::path walked = root;
    for (const auto& part : rel.lexically_normal()) {
        const std::string name = part.string();
        if (name.empty() || name == ".") continue;
        if (name == ".." || part.is_absolute())
            return Error::usage(describe("not beneath", root) + ": " + rel.string());
        walked /= name;
        UniqueFd next(
            ::openat(at.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next.valid() && errno == ENOENT && create) {
            if (::mkdirat(at.get(), name.c_str(), 0755) != 0 && errno != EEXIST)
                return Error::from_errno(describe("cannot create", walked), errno);
            next = UniqueFd(
                ::openat(at.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        }
        if (!next.valid() && (errno == ELOOP || errno == ENOTDIR)) return std::optional<UniqueFd>();
        if (!next.valid()) return Error::from_errno(describe("cannot open", walked), errno);
        at = std::move(next);
    }
    return std::optional<UniqueFd>(std::move(at));
}

Result<void> remove_tree(const fs::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return {};
        return Error::from_errno("cannot remove " + path.string(), errno);
    }
    if (S_ISDIR(st.st_mode)) {
        if ((st.st_mode & 0700) != 0700) ::chmod(path.c_str(), (st.st_mode & 07777) | 0700);
        std::error_code ec;
        for (const auto& entry : list_folder(path, ec))
            if (auto ok = remove_tree(entry.path); !ok) return ok;
        if (ec) return Error::general("cannot remove " + path.string() + ": " + ec.message());
        if (::rmdir(path.c_str()) != 0 && errno != ENOENT)
            return Error::from_errno("cannot remove " + path.string(), errno);
        return {};
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
        return Error::from_errno("cannot remove " + path.string(), errno);
    return {};
}

Result<TempFolder> TempFolder::make(const std::string& prefix) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        (fs::path(tmp && *tmp == '/' ? tmp : "/tmp") / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(pattern.data()))
        return Error::from_errno(
            "cannot make a folder in " + fs::path(pattern).parent_path().string(), errno);
    TempFolder folder;
    folder.path_ = pattern;
    return folder;
}

TempFolder::~TempFolder() {
    if (!path_.empty()) (void)remove_tree(path_);
}

}  // namespace cocode
