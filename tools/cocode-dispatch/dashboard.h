// The dashboard (docs/dashboard.md): the page of src/ui/ and the data it draws, served by
// `cocode-dispatch ui` and by `serve` under /ui. Its data comes from the run folders and the
// code the terminal commands use (views.h), never from a store of its own; a change to a run
// folder reaches an open page as a server-sent event within a second (inotify, nothing polled).
//
// The page's files are public (they hold no data); every /api/ request carries the token in
// an Authorization header or gets 401. Actions are POSTs, offered unless read-only.
#pragma once

#include <httplib.h>

#include <memory>
#include <string>

#include "workspace.h"

namespace cocode::dispatch_cli {

struct DashboardOptions {
    std::string prefix;  // "" for `ui`, "/ui" for `serve`
    std::string token;
    bool read_only = false;
};

class Dashboard {
  public:
    Dashboard(Workspace ws, DashboardOptions options);
    ~Dashboard();
    Dashboard(const Dashboard&) = delete;
    Dashboard& operator=(const Dashboard&) = delete;

    // Its routes on `server`, and the token's check before every /api/ route of its prefix.
    void mount(httplib::Server& server);
    // Ends the event streams and the folder watch (before the server stops).
    void close();

    struct State;

  private:
    std::unique_ptr<State> state_;
};

// "http://HOST:PORT/PREFIX/#token=…": what to open. The token is after '#', which a browser
// never sends nor passes on as a referrer; the page takes it from there and forgets the URL.
std::string dashboard_url(const std::string& host, int port, const std::string& prefix,
                          const std::string& token);

// COCODE_UI_TOKEN, or a new random one (and COCODE_UI_TOKEN taken out of the environment).
std::string dashboard_token();

}  // namespace cocode::dispatch_cli
