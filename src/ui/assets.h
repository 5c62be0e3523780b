// The dashboard's page (docs/dashboard.md): static files compiled into the binary from
// src/ui/static/, as they are — no build step, nothing fetched, works offline.
#pragma once

#include <string_view>
#include <vector>

namespace cocode::ui {

struct Asset {
    std::string_view name;  // "index.html", "app.js": the path below the dashboard's root
    std::string_view type;  // its Content-Type
    std::string_view body;
};

const std::vector<Asset>& assets();
// nullptr for a name that is not one of them.
const Asset* find_asset(std::string_view name);

}  // namespace cocode::ui
