// The agent's network under `network.mode` allowlist and audit: a hostile agent as a real
// process in its sandbox, real servers on the host's loopback, and what egress.jsonl, the
// run's files and /proc say afterwards (docs/security.md, "The agent's network").
#include <httplib.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "dispatch_fixture.h"
#include "loopback_server.h"
#include "net/proxy.h"
#include "proc/sandbox.h"

namespace cocode::test {
namespace {

using json = nlohmann::json;

std::string prober() {
    return std::string(COCODE_SOURCE_DIR) + "/tests/e2e/agents/egress-prober.py";
}

// A server on the host's loopback that says who it is.
struct Service {
    httplib::Server server;
    std::thread thread;
    int port = 0;
    explicit Service(const std::string& name) {
        server.Get("/.*", [name](const httplib::Request&, httplib::Response& res) {
            res.set_content(name, "text/plain");
        });
        port = start_on_loopback(server, thread, name.c_str());
    }
    ~Service() {
        server.stop();
        thread.join();
    }
};

class Egress : public DispatchRun {
  protected:
    void SetUp() override {
        if (!probe_sandbox().available) {
            ASSERT_EQ(std::getenv("COCODE_FULL_RUN"), nullptr) << probe_sandbox().why_not;
            GTEST_SKIP() << "no sandbox here: " << probe_sandbox().why_not;
        }
        DispatchRun::SetUp();
    }
    json prober_agent(json extra = json::object()) {
        json agent = {{"command", prober()},
                      {"env",
                       {{"PROBE_ALLOWED_PORT", std::to_string(allowed.port)},
                        {"PROBE_NAMED_PORT", std::to_string(named.port)},
                        {"PROBE_BLOCKED_PORT", std::to_string(blocked.port)}}}};
        agent.update(extra);
        return agent;
    }
    json said(const run::RunRecord& r) {
        for (const auto& line : read_lines(r.folder / "agent-stdout.txt"))
            if (!line.empty() && line.front() == '{') return json::parse(line);
        ADD_FAILURE() << "the prober said nothing: " << read_text(r.folder / "agent-stderr.txt");
        return json::object();
    }
    Service allowed{"allowed"}, named{"named"}, blocked{"blocked"};
};

// Every way out an agent can try, under the allowlist: only what is allowed answers, a block
// is a 403 at once naming the host and the setting, the rest never connects, and every
// connection is in egress.jsonl with the command that made it.
TEST_F(Egress, AHostileAgentGetsOutOnlyWhereTheAllowlistSays) {
    configure({{"network",
                {{"mode", "allowlist"}, {"allow", {"127.0.0.1:" + std::to_string(allowed.port)}}}},
               {"agents",
                {{"prober", prober_agent({{"network_allow",
                                           {"localhost:" + std::to_string(named.port)}}})}}}});
    Shell run = dispatch("run 1 --no-check");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto& r = only_run();
    EXPECT_EQ(run::read_run_info(r.folder)->get("network"), "allowlist");
    const json out = said(r);

    EXPECT_EQ(out["allowed_via_proxy"], json({200, "allowed"}));
    EXPECT_EQ(out["allowed_direct"], "answered HTTP/1.1 200 OK") << "at its own address, inside";
    const std::string blocked_at = "127.0.0.1:" + std::to_string(blocked.port);
    ASSERT_EQ(out["blocked_via_proxy"][0], 403);
    EXPECT_EQ(out["blocked_via_proxy"][1].get<std::string>(),
              "cocode: egress to " + blocked_at +
                  " is blocked; allow it with network.allow (every agent) or "
                  "agents.prober.network_allow in .cocode/config.json\n");
    EXPECT_EQ(out["blocked_direct"], "no connection: ConnectionRefusedError")
        << "no route to the host's other loopback services";
    EXPECT_EQ(out["dns"], "failed") << "no resolver inside";
    EXPECT_EQ(out["connect_other_port"], 403) << "an allowed host, on another port";
    EXPECT_EQ(out["nul_name"], 403) << "a name with a NUL in it";
    EXPECT_EQ(out["named_by_name"], json({200, "named"}));
    EXPECT_EQ(out["named_by_address"][0], 403) << "an allowed name's address is not the name";
    EXPECT_EQ(out["after_flood"], 200) << "the proxy stays up after a flood";

    const auto events = net::read_egress(r.folder / "egress.jsonl");
    int blocks = 0;
    bool allowed_seen = false;
    for (const auto& e : events) {
        if (!e.allowed) {
            ++blocks;
            EXPECT_NE(e.command.find("egress-prober.py"), std::string::npos)
                << "a block names the command that made it: " << e.command;
        }
        if (e.allowed && e.port == allowed.port) {
            allowed_seen = true;
            EXPECT_GT(e.bytes_in, 0u);
        }
    }
    EXPECT_TRUE(allowed_seen);
    EXPECT_GE(blocks, 3);  // by proxy, CONNECT to another port, an allowed name's address
    // Nothing of it survives the run: no process, no socket.
    EXPECT_TRUE(nothing_left(r));
    EXPECT_FALSE(fs::exists(r.folder / "egress.sock"));
}

// network.on_blocked: fail makes a block a FAIL of the check, naming the host and the
// command; the verdict lists what was blocked.
// What the bridge tells the proxy of a connection's maker is that process's command line, the
// agent's bytes: one that is not UTF-8, or cut in a character at 300 bytes, once ended the
// bridge (the sandbox's first process) with the run. It is told as text, and the run goes on.
TEST_F(Egress, AConnectionsMakerNamedInBytesThatAreNotUtf8EndsNothing) {
    const std::string url = "http://127.0.0.1:" + std::to_string(allowed.port) + "/";
    const json agent =
        json{{"command", "sh"},
             {"args",
              {"-c",
               "python3 - \"$(printf '\\351\\303%.0s' $(seq 200))\" \"$(printf 'e%.0s' "
               "$(seq 299))\\303\\251\" <<'PY'\n"
               "import urllib.request\n"
               "print(urllib.request.urlopen('" +
                   url +
                   "').read().decode())\n"
                   "PY\n"}}};
    configure({{"network",
                {{"mode", "allowlist"}, {"allow", {"127.0.0.1:" + std::to_string(allowed.port)}}}},
               {"agents", {{"talker", agent}}}});
    Shell run = dispatch("run 1 --no-check");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const auto& r = only_run();
    EXPECT_EQ(read_text(r.folder / "agent-stdout.txt"), "allowed\n")
        << read_text(r.folder / "agent-stderr.txt");
    const auto events = net::read_egress(r.folder / "egress.jsonl");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_TRUE(events.front().allowed);
    EXPECT_NE(events.front().command.find("python3"), std::string::npos) << events.front().command;
}

TEST_F(Egress, OnBlockedFailFailsTheCheckAndNamesTheHost) {
    configure({{"network", {{"mode", "allowlist"}, {"on_blocked", "fail"}}},
               {"agents", {{"prober", prober_agent()}}}});
    Shell run = dispatch("run 1");
    EXPECT_EQ(run.exit_code, 0) << "verdicts do not change run's exit code: " << run.err;
    const auto& r = only_run();
    const json check = json::parse(read_text(r.folder / "check.json"));
    EXPECT_EQ(check["verdict"], "FAIL");
    json network;
    for (const auto& c : check["checks"])
        if (c["id"] == "network") network = c;
    ASSERT_FALSE(network.is_null()) << check.dump(2);
    EXPECT_EQ(network["result"], "fail");
    const std::string reason = network["reason"].get<std::string>();
    EXPECT_NE(reason.find("127.0.0.1:" + std::to_string(blocked.port)), std::string::npos)
        << reason;
    const std::string report = read_text(r.folder / "check.md");
    EXPECT_NE(report.find("Blocked by the network allowlist"), std::string::npos) << report;
    EXPECT_NE(report.find("egress-prober.py"), std::string::npos) << report;
    // `logs` shows the blocks too.
    Shell logs = dispatch("logs " + r.run_id);
    EXPECT_NE(logs.out.find("[blocked] "), std::string::npos) << logs.out;
}

// audit lets everything through and records it; `egress` turns the record into the
// allowlist, and a run under that list blocks nothing.
TEST_F(Egress, AnAuditBecomesTheAllowlistThatBlocksNothing) {
    configure({{"network", {{"mode", "audit"}}}, {"agents", {{"prober", prober_agent()}}}});
    ASSERT_EQ(dispatch("run 1 --no-check").exit_code, 0);
    const auto audited = only_run();
    EXPECT_EQ(said(audited)["blocked_via_proxy"], json({200, "blocked"})) << "audit lets it by";
    // But for a name no host has, which reached the host before its NUL, recorded as allowed.
    EXPECT_EQ(said(audited)["nul_name"], 403);
    const auto recorded = net::read_egress(audited.folder / "egress.jsonl");
    ASSERT_FALSE(recorded.empty());
    for (const auto& e : recorded)
        EXPECT_EQ(e.allowed, net::is_host_name(e.host)) << e.host << ":" << e.port;

    Shell egress = dispatch("egress 1");
    ASSERT_EQ(egress.exit_code, 0) << egress.err;
    const json proposed = json::parse(egress.out);
    // As text: nlohmann 3.11.3 finds json == std::string ambiguous.
    const auto allow = proposed["network"]["allow"].get<std::vector<std::string>>();
    auto proposes = [&](const std::string& entry) {
        return std::find(allow.begin(), allow.end(), entry) != allow.end();
    };
    EXPECT_TRUE(proposes("127.0.0.1:" + std::to_string(blocked.port))) << egress.out;
    EXPECT_TRUE(proposes("localhost:" + std::to_string(named.port))) << egress.out;

    configure({{"network", proposed["network"]}, {"agents", {{"prober", prober_agent()}}}});
    Shell rerun = dispatch("run 2 --no-check");
    for (const auto& r : runs()) {
        if (r.issue != 2) continue;
        ASSERT_EQ(rerun.exit_code, 0) << rerun.err << read_text(r.folder / "agent-stderr.txt");
        const json out = said(r);
        EXPECT_EQ(out["blocked_via_proxy"], json({200, "blocked"}));
        for (const auto& e : net::read_egress(r.folder / "egress.jsonl"))
            EXPECT_EQ(e.allowed, net::is_host_name(e.host))
                << "blocked under the audited list: " << e.host << ":" << e.port;
    }
}

// Two runs at once have a proxy each, and each record holds only its own run's connections.
TEST_F(Egress, TwoRunsAtOnceKeepTheirOwnRecords) {
    const std::string visitor =
        std::string(COCODE_SOURCE_DIR) + "/tests/e2e/agents/egress-visitor.py";
    auto agent = [&](const Service& service) {
        return json{{"command", visitor},
                    {"env", {{"VISIT_PORT", std::to_string(service.port)}}},
                    {"network_allow", {"127.0.0.1:" + std::to_string(service.port)}}};
    };
    configure({{"network", {{"mode", "allowlist"}}},
               {"agents", {{"one", agent(allowed)}, {"two", agent(named)}}}});
    Shell run = dispatch("run 1 --no-check --concurrency 2");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto all = runs();
    ASSERT_EQ(all.size(), 2u);
    for (const auto& r : all) {
        const int own = r.agent == "one" ? allowed.port : named.port;
        const auto events = net::read_egress(r.folder / "egress.jsonl");
        ASSERT_EQ(events.size(), 1u) << r.agent;
        EXPECT_EQ(events[0].port, own) << r.agent << " saw another run's connection";
        EXPECT_TRUE(events[0].allowed);
        EXPECT_NE(read_text(r.folder / "agent-stdout.txt").find("visited:"), std::string::npos);
    }
}

// git inside the sandbox fetches from an allowed host through the proxy (it reads
// http_proxy): a repository served over HTTP on the host's loopback.
TEST_F(Egress, GitFetchesFromAnAllowedHostThroughTheProxy) {
    const fs::path served = dir_ / "served";
    fs::create_directories(served);
    sh_ok(
        "git init -q --bare origin.git && git clone -q origin.git work 2>/dev/null && cd work && "
        "git -c user.name=x -c user.email=x@cocode.invalid commit -q --allow-empty -m one && "
        "git push -q origin HEAD:main && cd ../origin.git && git update-server-info",
        served);
    const std::string head = sh_ok("git rev-parse main", served / "origin.git").substr(0, 40);
    httplib::Server http;
    ASSERT_TRUE(http.set_mount_point("/", served.string()));
    std::thread thread;
    const int port = start_on_loopback(http, thread, "git over http");
    configure(
        {{"network", {{"mode", "allowlist"}}},
         {"agents",
          {{"reader",
            {{"command", std::string(COCODE_SOURCE_DIR) + "/tests/e2e/agents/egress-git.sh"},
             {"env", {{"GIT_URL", "http://127.0.0.1:" + std::to_string(port) + "/origin.git"}}},
             {"network_allow", {"127.0.0.1:" + std::to_string(port)}}}}}}});
    Shell run = dispatch("run 1 --no-check");
    http.stop();
    thread.join();
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto& r = only_run();
    EXPECT_NE(
        read_text(r.folder / "agent-stdout.txt").find("remote: " + head + "\trefs/heads/main"),
        std::string::npos)
        << read_text(r.folder / "agent-stdout.txt") << read_text(r.folder / "agent-stderr.txt");
    const auto events = net::read_egress(r.folder / "egress.jsonl");
    ASSERT_FALSE(events.empty());
    for (const auto& e : events) {
        EXPECT_TRUE(e.allowed && e.port == port) << e.host << ":" << e.port;
        EXPECT_NE(e.command.find("git"), std::string::npos) << e.command;
    }
}

// An allowlist that no sandbox can give is refused, never run open; `doctor` says so.
TEST_F(Egress, AnAllowlistWithoutTheSandboxIsRefused) {
    configure({{"sandbox", "none"},
               {"network", {{"mode", "allowlist"}}},
               {"agents", {{"prober", prober_agent()}}}});
    Shell run = dispatch("run 1 --no-check");
    EXPECT_EQ(run.exit_code, 3) << run.err;
    EXPECT_NE(run.err.find("network.mode allowlist needs the sandbox's network namespace, but "
                           "sandbox: none"),
              std::string::npos)
        << run.err;
    EXPECT_NE(run.err.find("set network.mode to \"open\""), std::string::npos) << run.err;
    // doctor says so before any run.
    const json checks = json::parse(dispatch("doctor --json").out);
    json network;
    for (const auto& c : checks)
        if (c["check"] == "network") network = c;
    EXPECT_EQ(network["state"], "missing") << checks.dump(2);
    EXPECT_NE(network["detail"].get<std::string>().find("runs are refused"), std::string::npos)
        << network.dump();
    const auto& r = only_run();
    EXPECT_FALSE(fs::exists(r.folder / "agent-stdout.txt") &&
                 read_text(r.folder / "agent-stdout.txt").find("proxy") != std::string::npos)
        << "the agent never ran";
}

}  // namespace
}  // namespace cocode::test
