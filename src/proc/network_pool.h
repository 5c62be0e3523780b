// Network namespaces made ahead, a few at a time, and each given to one sandbox at a time. A
// network namespace costs the kernel more to make and to throw away than all the rest of a
// sandbox's start (docs/performance.md): a batch of runs pays for one per run going at once,
// not one per run. cocode-sandbox makes them (`--make-networks`: each with its loopback up, in
// a user namespace of their own) and joins one (`--net-from-fd`), its own user namespace made
// inside theirs, so nothing a sandbox runs has any capability over its network: it cannot
// change an address, a route, a filter or a setting of it, and what it can make there (its
// sockets) goes with its last process. A namespace comes back only from a sandbox that ended
// by itself (its first process waited for every other); one whose sandbox was killed is
// thrown away, its processes may still be going.
#pragma once

#include <filesystem>
#include <mutex>
#include <vector>

#include "core/files.h"

namespace cocode {

class NetworkPool {
  public:
    // `program`: cocode-sandbox (proc/sandbox.h's sandbox_program).
    explicit NetworkPool(std::filesystem::path program) : program_(std::move(program)) {}

    // Makes namespaces until `count` are free (a batch's, before its first run starts).
    void reserve(int count);

    // One namespace of the pool, made now (with a few more) when none is free; an invalid
    // descriptor when none can be made (the sandbox then makes its own).
    UniqueFd take();

    // A namespace taken, once the sandbox it was given to has ended by itself.
    void give_back(UniqueFd network);

    // How many it has made in all (for the tests and the bench).
    int made() const;

  private:
    std::filesystem::path program_;
    mutable std::mutex mutex_;
    std::vector<UniqueFd> free_;
    int made_ = 0;
    bool broken_ = false;  // making failed once: not asked again
};

}  // namespace cocode
