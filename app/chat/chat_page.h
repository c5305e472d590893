// The Chat page: pick a run (its model, or base model + LoRA adapter) or a model folder, set the sampling,
// and talk to it; the reply grows in the transcript as the generator streams it, Stop ends it, the status
// line says where it runs and how fast. It only draws: the conversation and the generator process are a
// ChatSession's, and where a run's generator runs (this computer, or srun on its cluster) is the window's
// transport factory.
#pragma once

#include <QWidget>

#include <cstdint>
#include <functional>

#include "chat/chat_session.h"
#include "contract/status.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTextBrowser;

namespace slipway::app {

class ChatTransport;
class RunHistory;
struct StoredRun;

class ChatPage : public QWidget {
    Q_OBJECT

public:
    // The transport for a run (null: a model folder on this computer); an error says why there is none.
    using TransportFactory = std::function<Result<ChatTransport*>(const StoredRun* run)>;

    ChatPage(RunHistory* history, TransportFactory transports, QWidget* parent = nullptr);

    // Lists the history's completed runs again (keeps the choice when it is still there).
    void reload();
    // Talk to a stored run / a model folder on this computer; the conversation starts afresh.
    [[nodiscard]] Status choose_run(int64_t run_id);
    [[nodiscard]] Status choose_model_folder(const QString& dir);

    ChatSession* session() const { return session_; }
    QComboBox* run_box() const { return runs_; }
    QPlainTextEdit* input() const { return input_; }
    QPushButton* send_button() const { return send_; }
    QPushButton* stop_button() const { return stop_; }
    QTextBrowser* transcript() const { return transcript_; }
    QLabel* status_label() const { return status_; }
    QSpinBox* max_tokens_box() const { return max_tokens_; }
    QDoubleSpinBox* temperature_box() const { return temperature_; }
    QLineEdit* system_box() const { return system_; }

    // Sends the input box's text (what the Send button and Ctrl+Return do).
    bool send();
    QPushButton* export_gguf_button() const { return export_gguf_; }

signals:
    // Export GGUF... of the model talked to (the window asks where and runs it).
    void export_gguf_requested(const ChatTarget& target);

private:
    void use(ChatTransport* transport, const ChatTarget& target);
    ChatSettings settings() const;
    void render();
    void update_buttons();
    void set_status(const QString& text);

    RunHistory* history_;
    TransportFactory transports_;
    ChatSession* session_ = nullptr;
    QString reply_;  // the reply arriving now

    QComboBox* runs_;
    QPushButton* folder_;
    QPushButton* export_gguf_;
    QLabel* target_label_;
    QSpinBox* max_tokens_;
    QDoubleSpinBox* temperature_;
    QDoubleSpinBox* top_p_;
    QLineEdit* system_;
    QTextBrowser* transcript_;
    QPlainTextEdit* input_;
    QPushButton* send_;
    QPushButton* stop_;
    QPushButton* clear_;
    QLabel* status_;
};

}  // namespace slipway::app
