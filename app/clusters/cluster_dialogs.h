// The cluster dialogs: editing a profile (every ClusterProfile field, validated by remote/slurm before it
// is saved), the unknown-host-key question (SHA256 fingerprint; accept once, accept and save, reject), and
// passphrase / password / 2FA prompts. make_gui_callbacks() wires them into SessionCallbacks that a worker
// thread may call: each question is asked on the GUI thread while the worker waits. Secrets are handed to
// libssh once and never stored (no keychain entry, no file).
#pragma once

#include <QDialog>

#include "remote/slurm/cluster_profile.h"
#include "remote/ssh/session.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;

namespace slipway::app {

class ProfileDialog : public QDialog {
    Q_OBJECT

public:
    explicit ProfileDialog(const remote::ClusterProfile& profile, QWidget* parent = nullptr);
    // The profile as edited; fails (naming the field) when it does not validate.
    Result<remote::ClusterProfile> profile() const;
    void accept() override;  // only with a valid profile

    QLineEdit* name_edit() const { return name_; }
    QLineEdit* host_edit() const { return host_; }

private:
    QLineEdit* name_;
    QLineEdit* host_;
    QSpinBox* port_;
    QLineEdit* user_;
    QLineEdit* identity_;
    QLineEdit* jump_;
    QLineEdit* workdir_;
    QComboBox* container_;
    QComboBox* engine_source_;
    QPlainTextEdit* env_setup_;  // one shell line per line
    QLineEdit* partition_;
    QLineEdit* account_;
    QLineEdit* qos_;
    QLabel* error_;
};

// The question for a host key not in known_hosts, as text (also used by the dialog).
QString host_key_question(const remote::HostKeyInfo& key);

// Asks about an unknown host key with a modal dialog (GUI thread).
remote::HostKeyDecision ask_host_key(QWidget* parent, const remote::HostKeyInfo& key);

// Callbacks that show the dialogs above on the GUI thread; callable from any thread.
remote::SessionCallbacks make_gui_callbacks(QWidget* parent);

}  // namespace slipway::app
