// IssueSource over the GitHub REST API.
#pragma once

#include <memory>

#include "github/http.h"
#include "issues/source.h"

namespace cocode::issues {

std::unique_ptr<IssueSource> github_source(std::unique_ptr<github::HttpClient> http,
                                           github::RepoRef repo);

}  // namespace cocode::issues
