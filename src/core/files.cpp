#include "core/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

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

Result<void> write_all(int fd, std::string_view data, const fs::path& path) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return Error::from_errno(describe("cannot write", path), errno);
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

void fsync_parent(const fs::path& path) {
    fs::path dir = path.parent_path();
    if (dir.empty()) dir = ".";
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.valid()) ::fsync(fd.get());
}

}  // namespace

Result<std::string> read_file(const fs::path& path, std::size_t limit) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return Error::from_errno(describe("cannot read", path), errno);
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return Error::from_errno(describe("cannot read", path), errno);
        }
        if (n == 0) break;
        if (out.size() + static_cast<std::size_t>(n) > limit) {
            return Error::general(path.string() + ": larger than " + std::to_string(limit) +
                                  " bytes");
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

std::string read_file_tail(const fs::path& path, std::size_t bytes) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return "";
    const auto size = static_cast<std::size_t>(st.st_size);
    const std::size_t take = std::min(size, bytes);
    std::string out(take, '\0');
    ssize_t n = ::pread(fd.get(), out.data(), take, static_cast<off_t>(size - take));
    out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return out;
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
    if (::fsync(fd.get()) != 0)
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
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, mode));
    if (!fd.valid()) return Error::from_errno(describe("cannot create", path), errno);
    return {};
}

Result<void> append_line_locked(const fs::path& path, std::string_view line) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
    if (!fd.valid()) return Error::from_errno(describe("cannot open", path), errno);
    while (::flock(fd.get(), LOCK_EX) != 0) {
        if (errno != EINTR) return Error::from_errno(describe("cannot lock", path), errno);
    }
    std::string record;
    struct stat st {};
    if (::fstat(fd.get(), &st) == 0 && st.st_size > 0) {
        char last = '\n';
        UniqueFd reader(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (reader.valid() && ::pread(reader.get(), &last, 1, st.st_size - 1) == 1 &&
            last != '\n') {
            record += '\n';
        }
    }
    record += line;
    if (record.empty() || record.back() != '\n') record += '\n';
    return write_all(fd.get(), record, path);  // closing the descriptor drops the lock
}

Result<FileLock> FileLock::acquire(const fs::path& lock_path) {
    UniqueFd fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (!fd.valid()) return Error::from_errno(describe("cannot open", lock_path), errno);
    while (::flock(fd.get(), LOCK_EX) != 0) {
        if (errno != EINTR) return Error::from_errno(describe("cannot lock", lock_path), errno);
    }
    return FileLock(std::move(fd));
}

Result<void> update_file_locked(
    const fs::path& path,
    const std::function<Result<std::string>(const std::optional<std::string>&)>& edit, mode_t mode,
    Durability durability) {
    auto lock = FileLock::acquire(path.string() + ".lock");
    if (!lock) return std::move(lock).error();
    std::optional<std::string> current;
    std::error_code ec;
    if (fs::exists(path, ec)) {
        auto content = read_file(path);
        if (!content) return std::move(content).error();
        current = std::move(content).value();
    }
    auto next = edit(current);
    if (!next) return std::move(next).error();
    return write_file_atomic(path, *next, mode, durability);
}

}  // namespace cocode
