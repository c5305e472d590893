// The Chat page's widgets and how they follow its ChatSession (see chat_page.h).
#include "chat/chat_page.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QShortcut>
#include <QSpinBox>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "chat/chat_transport.h"
#include "chat/run_chat_target.h"
#include "history/run_history.h"

namespace slipway::app {

ChatPage::ChatPage(RunHistory* history, TransportFactory transports, QWidget* parent)
    : QWidget(parent), history_(history), transports_(std::move(transports)) {
    runs_ = new QComboBox(this);
    runs_->setMinimumContentsLength(30);
    runs_->setToolTip(
        tr("A completed run: a LoRA run talks through its base model with its adapter, a full "
           "run through its own model"));
    folder_ = new QPushButton(tr("Model folder..."), this);
    folder_->setToolTip(
        tr("An HF model folder on this computer (config.json, *.safetensors, tokenizer.json)"));
    export_gguf_ = new QPushButton(tr("Export GGUF..."), this);
    export_gguf_->setToolTip(tr("This model (LoRA merged) as one GGUF file for llama.cpp or Ollama"));
    connect(export_gguf_, &QPushButton::clicked, this, [this] {
        if (session_ != nullptr) emit export_gguf_requested(session_->target());
    });
    target_label_ = new QLabel(this);
    target_label_->setWordWrap(true);
    target_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    max_tokens_ = new QSpinBox(this);
    max_tokens_->setRange(1, 1 << 20);
    max_tokens_->setValue(ChatSettings{}.max_new_tokens);
    temperature_ = new QDoubleSpinBox(this);
    temperature_->setRange(0, 5);
    temperature_->setSingleStep(0.1);
    temperature_->setValue(ChatSettings{}.temperature);
    temperature_->setToolTip(tr("0: greedy (the most likely token every time)"));
    top_p_ = new QDoubleSpinBox(this);
    top_p_->setRange(0.01, 1);
    top_p_->setSingleStep(0.05);
    top_p_->setValue(ChatSettings{}.top_p);
    system_ = new QLineEdit(this);
    system_->setPlaceholderText(tr("System prompt (optional)"));

    transcript_ = new QTextBrowser(this);
    transcript_->setOpenLinks(false);
    input_ = new QPlainTextEdit(this);
    input_->setPlaceholderText(tr("Message (Ctrl+Return sends)"));
    input_->setMaximumHeight(90);
    send_ = new QPushButton(tr("Send"), this);
    stop_ = new QPushButton(tr("Stop"), this);
    stop_->setToolTip(tr("End the reply: the generator process (on a cluster, its srun job) is ended"));
    clear_ = new QPushButton(tr("New conversation"), this);
    status_ = new QLabel(this);
    status_->setWordWrap(true);

    auto* pick = new QHBoxLayout;
    pick->addWidget(new QLabel(tr("Talk to:"), this));
    pick->addWidget(runs_, 1);
    pick->addWidget(folder_);
    pick->addWidget(export_gguf_);
    auto* sampling = new QHBoxLayout;
    sampling->addWidget(new QLabel(tr("Max new tokens"), this));
    sampling->addWidget(max_tokens_);
    sampling->addWidget(new QLabel(tr("Temperature"), this));
    sampling->addWidget(temperature_);
    sampling->addWidget(new QLabel(tr("Top-p"), this));
    sampling->addWidget(top_p_);
    sampling->addWidget(system_, 1);
    auto* buttons = new QVBoxLayout;
    buttons->addWidget(send_);
    buttons->addWidget(stop_);
    buttons->addWidget(clear_);
    buttons->addStretch(1);
    auto* entry = new QHBoxLayout;
    entry->addWidget(input_, 1);
    entry->addLayout(buttons);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(pick);
    layout->addWidget(target_label_);
    layout->addLayout(sampling);
    layout->addWidget(transcript_, 1);
    layout->addLayout(entry);
    layout->addWidget(status_);

    connect(runs_, qOverload<int>(&QComboBox::activated), this, [this](int index) {
        const qint64 id = runs_->itemData(index).toLongLong();
        if (id > 0) {
            if (Status s = choose_run(id); !s.ok()) set_status(QString::fromStdString(s.message()));
        }
    });
    connect(folder_, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Model folder"));
        if (dir.isEmpty()) return;
        if (Status s = choose_model_folder(dir); !s.ok()) set_status(QString::fromStdString(s.message()));
    });
    connect(send_, &QPushButton::clicked, this, [this] { send(); });
    auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), input_);
    connect(shortcut, &QShortcut::activated, this, [this] { send(); });
    connect(stop_, &QPushButton::clicked, this, [this] {
        if (session_) session_->stop();
    });
    connect(clear_, &QPushButton::clicked, this, [this] {
        if (!session_) return;
        session_->clear();
        reply_.clear();
        render();
        update_buttons();
    });
    reload();
    update_buttons();
    set_status(tr("Pick a completed run or a model folder."));
}

void ChatPage::reload() {
    const qint64 current = runs_->currentData().toLongLong();
    runs_->clear();
    runs_->addItem(tr("(choose a run)"), qint64(0));
    if (history_ == nullptr) return;
    const Result<std::vector<StoredRun>> runs = history_->runs();
    if (!runs.ok()) return;
    for (const StoredRun& run : *runs) {
        if (run.state != RunState::kCompleted || run.config_json.empty()) continue;
        runs_->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(run.name),
                                                     QString::fromStdString(run.cluster)),
                       qint64(run.id));
    }
    if (const int index = runs_->findData(current); index > 0) runs_->setCurrentIndex(index);
}

Status ChatPage::choose_run(int64_t run_id) {
    if (history_ == nullptr) return Status::Error("no run history");
    const Result<StoredRun> run = history_->run(run_id);
    if (!run.ok()) return run.status();
    const Result<ChatTarget> target = chat_target_of_run(*run);
    if (!target.ok()) return target.status();
    const Result<ChatTransport*> transport = transports_(&*run);
    if (!transport.ok()) return transport.status();
    if (int index = runs_->findData(qint64(run_id)); index >= 0) {
        runs_->setCurrentIndex(index);
    } else {
        runs_->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(run->name),
                                                     QString::fromStdString(run->cluster)),
                       qint64(run_id));
        runs_->setCurrentIndex(runs_->count() - 1);
    }
    use(*transport, *target);
    return Status::Ok();
}

Status ChatPage::choose_model_folder(const QString& dir) {
    if (!QDir(dir).exists(QStringLiteral("config.json")))
        return Status::Error(dir.toStdString() + ": not a model folder (no config.json)");
    const Result<ChatTransport*> transport = transports_(nullptr);
    if (!transport.ok()) return transport.status();
    runs_->setCurrentIndex(0);
    use(*transport, ChatTarget{dir, {}, {}, QDir(dir).dirName()});
    return Status::Ok();
}

void ChatPage::use(ChatTransport* transport, const ChatTarget& target) {
    delete session_;  // ends its process
    reply_.clear();
    session_ = new ChatSession(transport, this);
    session_->set_settings(settings());
    session_->set_target(target);
    QString where = tr("Model: %1").arg(target.model_dir);
    if (!target.adapter_dir.isEmpty()) where += tr("; LoRA adapter: %1").arg(target.adapter_dir);
    target_label_->setText(where + tr(" (runs on %1)").arg(transport->where()));

    connect(session_, &ChatSession::reply_started, this, [this] {
        reply_.clear();
        render();
        update_buttons();
        set_status(tr("Waiting for the model..."));
    });
    connect(session_, &ChatSession::delta, this, [this](const QString& text) {
        if (reply_.isEmpty()) set_status(tr("Generating..."));
        reply_ += text;
        render();
    });
    connect(session_, &ChatSession::reply_finished, this, [this](const ChatStats& stats) {
        reply_.clear();
        render();
        update_buttons();
        if (stats.finish_reason == QLatin1String("stopped")) {
            set_status(tr("Stopped."));
        } else {
            set_status(
                tr("%1 tokens at %2 tokens/s (prompt %3 tokens; ended by %4)")
                    .arg(stats.new_tokens)
                    .arg(stats.tokens_per_s, 0, 'f', 1)
                    .arg(stats.prompt_tokens)
                    .arg(stats.finish_reason) +
                (session_->chat_mode()
                     ? QString()
                     : tr(" — the model has no chat template: each message goes alone, as plain text")));
        }
    });
    connect(session_, &ChatSession::reply_failed, this, [this](const QString& error) {
        reply_.clear();
        render();
        update_buttons();
        set_status(tr("No reply: %1").arg(error));
    });
    connect(session_, &ChatSession::notice, this, [this](const QString& text) {
        if (session_->busy()) set_status(text);
        update_buttons();  // the process started
    });
    connect(session_, &ChatSession::process_ended, this, [this](int, bool) { update_buttons(); });
    render();
    update_buttons();
    set_status(tr("Ready: the model loads with the first message."));
}

ChatSettings ChatPage::settings() const {
    ChatSettings s;
    s.max_new_tokens = max_tokens_->value();
    s.temperature = temperature_->value();
    s.top_p = top_p_->value();
    s.system = system_->text();
    return s;
}

bool ChatPage::send() {
    if (!session_) return false;
    session_->set_settings(settings());
    const QString text = input_->toPlainText().trimmed();
    if (!session_->send(text)) return false;
    input_->clear();
    return true;
}

void ChatPage::render() {
    QString html;
    auto block = [&html](const QString& who, const QString& text, const char* color) {
        html += QStringLiteral("<p><b style=\"color:%1\">%2</b><br>%3</p>")
                    .arg(QLatin1String(color), who.toHtmlEscaped(),
                         text.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    };
    if (session_) {
        for (const ChatMessage& m : session_->messages()) {
            if (m.role == QLatin1String("user")) {
                block(tr("You"), m.content, "#1f5fa8");
            } else {
                block(session_->target().label, m.content, "#2e7d32");
            }
        }
        if (session_->busy()) block(session_->target().label, reply_ + QStringLiteral(" ▍"), "#2e7d32");
    }
    transcript_->setHtml(html);
    transcript_->verticalScrollBar()->setValue(transcript_->verticalScrollBar()->maximum());
}

void ChatPage::update_buttons() {
    const bool busy = session_ && session_->busy();
    export_gguf_->setEnabled(session_ != nullptr);
    send_->setEnabled(session_ && !busy);
    stop_->setEnabled(session_ && session_->transport()->running());
    clear_->setEnabled(session_ && !session_->messages().empty());
}

void ChatPage::set_status(const QString& text) {
    status_->setText(text);
}

}  // namespace slipway::app
