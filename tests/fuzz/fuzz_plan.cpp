// A plan round's answer — a model's words — read as a plan, and the comments that command plans
// and the merge gate: each is read whole or refused with a reason, never half-believed. A plan
// read has files and steps, each file a path of the repository, and the same hash every time;
// a verify command a plan may add holds no shell control character.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "check/gate.h"
#include "check/work_plan.h"
#include "core/glob.h"
#include "fuzz_support.h"
#include "scale/trigger.h"

using namespace cocode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    const std::string prefix = input.ConsumeRandomLengthString(32);
    const std::string text = input.ConsumeRemainingBytesAsString();

    const auto read = check::read_work_plan(text);
    std::vector<std::string> tests = {text};
    if (read.plan) {
        FUZZ_CHECK(read.why_not.empty());
        FUZZ_CHECK(read.plan->hash.size() == 12);
        FUZZ_CHECK(!read.plan->files.empty() && !read.plan->steps.empty());
        for (const auto& file : read.plan->files)
            FUZZ_CHECK(!file.empty() && file.front() != '/' && !glob_problem(file));
        FUZZ_CHECK(check::read_work_plan(text).plan->hash == read.plan->hash);
        tests = read.plan->tests;
    } else {
        FUZZ_CHECK(!read.why_not.empty());
    }
    const auto bound = check::bind_verify(tests, {prefix});
    FUZZ_CHECK(bound.kept.size() + bound.left_out.size() == tests.size());
    for (const auto& kept : bound.kept)
        FUZZ_CHECK(kept.find_first_of(";|&$`<>\n\\") == std::string::npos);

    if (auto said = scale::plan_command(text, "/cocode"))
        FUZZ_CHECK(said->verb != check::PlanVerb::none);
    if (auto sha = check::approve_merge_sha(text, "/cocode"))
        FUZZ_CHECK(sha->size() >= 7 && sha->size() <= 40);
    return 0;
}
