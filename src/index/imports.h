// Who imports what, for docdex.impact: an import as written in a file (found by Universal Ctags
// for C/C++ includes, Python imports and Go packages; by a small scanner here for JavaScript
// and TypeScript, which ctags 5.9 does not tag), and where it leads among the worktree's files
// — each language's own lookup rules, as far as they can be followed without its build system.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cocode::index {

enum class Language { other, c_family, python, go, javascript };
Language language_of(std::string_view path);  // by extension

struct ImportRef {
    std::string spec;  // as written: "auth/login.h", "auth.login", ".util", "./login", "fmt"
    long line = 0;
    // Python's `from X import Y` names a module X.Y only when there is one; else it imports Y
    // from X. Such a spec is listed only when it resolves.
    bool optional = false;
};

// `import … from '…'`, `export … from '…'`, `import '…'`, `require('…')`, `import('…')`.
std::vector<ImportRef> scan_js_imports(std::string_view content);

// The name an import is filed under, so that a file's importers are found without reading every
// file: the last component of what it names ("login" for auth/login.h, auth.login, ./login).
std::string import_key(std::string_view spec, Language language);
// The names under which imports of `path` are filed.
std::vector<std::string> keys_of(std::string_view path);

// Resolves imports against the worktree's files.
class Resolver {
  public:
    // `read` gives a file's text (go.mod files are read for their module path).
    Resolver(const std::vector<std::string>& files,
             const std::function<std::optional<std::string>(const std::string&)>& read);

    // The file (or, for Go, the package folder with a trailing '/') that `ref` in `from`
    // leads to; nullopt for what is not in the worktree (a system header, a package).
    std::optional<std::string> resolve(const std::string& from, const ImportRef& ref) const;

  private:
    bool has(const std::string& path) const { return files_.count(path) != 0; }
    std::optional<std::string> by_suffix(const std::string& tail) const;
    std::set<std::string> files_;
    std::set<std::string> folders_;
    std::map<std::string, std::vector<std::string>> by_name_;      // file name -> paths
    std::vector<std::pair<std::string, std::string>> go_modules_;  // module path, folder
};

// The folder of a path ("" at the root) and a path made normal ("a/./b/../c" -> "a/c");
// nullopt when it leaves the root.
std::string folder_of(std::string_view path);
std::optional<std::string> normal_path(std::string_view path);

}  // namespace cocode::index
