// Answering a Codali AGENT_REQUEST in a worktree (docs/protocols.md, "Codali"): every need
// carried out locally and its result put in one CODALI_RESPONSE. file.* needs go through the
// text protocol's sandbox (protocol/executor.h: no absolute paths, no `..` out, no links out,
// no .git); docdex.* needs are answered from the worktree's index (index/worktree_index.h).
// A need that cannot be answered gives a warning and no result; the others still answer.
#pragma once

#include <cstddef>
#include <filesystem>

#include "index/worktree_index.h"
#include "protocol/envelope.h"

namespace cocode::agent {

struct NeedsContext {
    std::filesystem::path root;             // the worktree, canonical
    index::WorktreeIndex* index = nullptr;  // nullptr: docdex needs are answered with a warning
    // Characters of file content one response may carry; past it, content is cut and the cut
    // is said in the result (truncated, total_bytes) and in meta.warnings.
    std::size_t content_budget = 200'000;
};

// The response to `request`, or — for a request that could not be read — a response with no
// results whose warning says what was wrong, for the model to correct.
protocol::CodaliResponse answer_request(const protocol::AgentRequest& request,
                                        const NeedsContext& context);
protocol::CodaliResponse malformed_request(const std::string& text, const std::string& error);

}  // namespace cocode::agent
