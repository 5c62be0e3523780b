// Where the tools find each other: installed side by side (bin/), the hook shim in bin/ or
// ../libexec/cocode/, exactly as the build tree and `cmake --install` lay them out.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cocode::tool {

// This executable's absolute path. One replaced since this process started (an upgrade, a
// rebuild) is "<path> (deleted)" to the kernel: then the file now at <path>, its newer self —
// a long `watch` or `replay mine` still starts its sandbox's helper and finds its siblings.
inline std::filesystem::path self_executable(const char* fallback) {
    std::error_code ec;
    std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec) return fallback;
    constexpr std::string_view deleted = " (deleted)";
    if (self.ends_with(deleted) && !std::filesystem::exists(self, ec))
        self.resize(self.size() - deleted.size());
    return self;
}

// A tool installed beside this one ("cocode-hook", "cocode-check", "cocode-hook-shim").
inline std::filesystem::path sibling_executable(const std::string& name) {
    const std::filesystem::path dir = self_executable(name.c_str()).parent_path();
    for (const std::filesystem::path& candidate :
         {dir / name, dir / ".." / "libexec" / "cocode" / name}) {
        if (std::filesystem::exists(candidate)) return candidate.lexically_normal();
    }
    return dir / name;
}

// A data file installed with the tools (`<prefix>/share/cocode/<name>`, as `cmake --install`
// lays it out beside bin/), or nullopt when this executable is not installed so.
inline std::optional<std::filesystem::path> installed_data(const std::string& name) {
    const std::filesystem::path file =
        self_executable(name.c_str()).parent_path() / ".." / "share" / "cocode" / name;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return std::nullopt;
    return file.lexically_normal();
}

}  // namespace cocode::tool
