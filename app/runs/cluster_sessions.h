// One ClusterSession per cluster profile, made on first use and shared by everything that talks to that
// cluster (the Clusters page's tests, the run tracker's submits, polls and follows, the remote browser).
// A profile whose settings changed or that was removed loses its session; session_replaced /
// session_removed are emitted *before* the old session is destroyed, so its users can disconnect and
// move their runs to the new one. No widgets: the SSH prompts come from the callbacks factory.
#pragma once

#include <QObject>
#include <QString>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clusters/cluster_session.h"
#include "remote/slurm/cluster_profile.h"

namespace slipway::app {

class ClusterSessions : public QObject {
    Q_OBJECT

public:
    // Host key, passphrase and 2FA prompts for a new session (the app: make_gui_callbacks(window)).
    using CallbacksFactory = std::function<remote::SessionCallbacks()>;

    explicit ClusterSessions(CallbacksFactory callbacks = {}, QObject* parent = nullptr);
    ~ClusterSessions() override;

    // The known profiles. A profile that changed (any connection setting) or disappeared loses its session.
    void set_profiles(std::vector<remote::ClusterProfile> profiles);
    const std::vector<remote::ClusterProfile>& profiles() const { return profiles_; }
    // The session of a profile, made on first use; null for an unknown name.
    ClusterSession* session(const std::string& profile);
    // The session if one is open already (never makes one); null otherwise.
    ClusterSession* existing(const std::string& profile) const;

    // How sessions connect (tests: a FakeSession factory; empty: libssh). Applies to sessions made later.
    void set_connector(ClusterSession::Connector connector) { connector_ = std::move(connector); }
    const ClusterSession::Connector& connector() const { return connector_; }
    void set_callbacks(CallbacksFactory callbacks) { callbacks_ = std::move(callbacks); }
    // The run history sessions record new jobs in (their worker's own connection); "" records nothing.
    void set_store_path(const QString& path);

signals:
    void session_created(const QString& profile, slipway::app::ClusterSession* session);
    void session_replaced(const QString& profile, slipway::app::ClusterSession* old_session);
    void session_removed(const QString& profile, slipway::app::ClusterSession* old_session);

private:
    void drop(const std::string& profile, bool replaced);

    CallbacksFactory callbacks_;
    ClusterSession::Connector connector_;
    QString store_path_;
    std::vector<remote::ClusterProfile> profiles_;
    std::map<std::string, std::unique_ptr<ClusterSession>> sessions_;
};

}  // namespace slipway::app
