// ClusterSessions: the profile -> session map, and the rule that a changed or removed profile's session
// is announced before it goes.
#include "runs/cluster_sessions.h"

#include <algorithm>

namespace slipway::app {

ClusterSessions::ClusterSessions(CallbacksFactory callbacks, QObject* parent)
    : QObject(parent), callbacks_(std::move(callbacks)) {}

ClusterSessions::~ClusterSessions() = default;

void ClusterSessions::set_profiles(std::vector<remote::ClusterProfile> profiles) {
    std::vector<std::string> replaced, removed;
    for (const auto& [name, session] : sessions_) {
        const auto now = std::find_if(profiles.begin(), profiles.end(),
                                      [&](const remote::ClusterProfile& p) { return p.name == name; });
        if (now == profiles.end()) {
            removed.push_back(name);
        } else if (remote::profile_to_json(*now) != remote::profile_to_json(session->profile())) {
            replaced.push_back(name);  // its connection settings may have changed
        }
    }
    profiles_ = std::move(profiles);
    for (const std::string& name : removed)
        drop(name, false);
    for (const std::string& name : replaced)
        drop(name, true);
}

void ClusterSessions::drop(const std::string& profile, bool replaced) {
    const auto it = sessions_.find(profile);
    if (it == sessions_.end()) return;
    // Announced while the old session still exists: its users disconnect from it and stop its follows.
    if (replaced) {
        emit session_replaced(QString::fromStdString(profile), it->second.get());
    } else {
        emit session_removed(QString::fromStdString(profile), it->second.get());
    }
    sessions_.erase(profile);
}

void ClusterSessions::set_store_path(const QString& path) {
    store_path_ = path;
    for (auto& [name, session] : sessions_)
        session->set_store_path(path);
}

ClusterSession* ClusterSessions::existing(const std::string& profile) const {
    const auto it = sessions_.find(profile);
    return it == sessions_.end() ? nullptr : it->second.get();
}

ClusterSession* ClusterSessions::session(const std::string& profile) {
    if (ClusterSession* s = existing(profile)) return s;
    for (const remote::ClusterProfile& p : profiles_) {
        if (p.name != profile) continue;
        auto session = std::make_unique<ClusterSession>(
            p, callbacks_ ? callbacks_() : remote::SessionCallbacks(), connector_);
        ClusterSession* raw = session.get();
        raw->set_store_path(store_path_);
        sessions_[profile] = std::move(session);
        emit session_created(QString::fromStdString(profile), raw);
        return raw;
    }
    return nullptr;
}

}  // namespace slipway::app
