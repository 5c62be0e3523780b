#include "github/git_remote.h"

#include "github/url.h"

namespace cocode::github {

git::GitOptions origin_git_options(const std::filesystem::path& dir) {
    git::GitOptions options;
    auto url = git::git_line(dir, {"remote", "get-url", "origin"});
    if (!url) return options;
    auto token = getenv_string("GITHUB_TOKEN");
    if (!token) token = getenv_string("GH_TOKEN");
    auto api = resolve_api_url(std::nullopt);
    if (token && api && token_goes_to(*url, *api))
        options.credential =
            git::GitCredential{url->substr(0, url->find('/', 8)), "x-access-token", *token};
    return options;
}

}  // namespace cocode::github
