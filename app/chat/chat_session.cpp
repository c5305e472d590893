// ChatSession: the conversation, the generator's protocol lines and the fall back to plain text (see
// chat_session.h).
#include "chat/chat_session.h"

#include <nlohmann/json.hpp>

#include "chat/chat_setup.h"  // engine/chat: the generator's exit code for a model without a template
#include "chat/chat_transport.h"

namespace slipway::app {
namespace {

constexpr int kStderrTailLines = 8;  // the generator's last stderr lines, kept for a failure's message

QString text_of(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? QString::fromStdString(it->get<std::string>()) : QString();
}

}  // namespace

GeneratorLine parse_generator_line(const QByteArray& line) {
    GeneratorLine out;
    out.text = QString::fromUtf8(line);
    const nlohmann::json j = nlohmann::json::parse(line.toStdString(), nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return out;
    if (j.contains("delta") && j["delta"].is_string()) {
        out.kind = GeneratorLine::Kind::kDelta;
        out.text = text_of(j, "delta");
    } else if (j.contains("error") && j["error"].is_string()) {
        out.kind = GeneratorLine::Kind::kError;
        out.text = text_of(j, "error");
    } else if (j.contains("finish_reason") && j.contains("text") && j["text"].is_string()) {
        out.kind = GeneratorLine::Kind::kFinal;
        out.text = text_of(j, "text");
        out.stats.finish_reason = text_of(j, "finish_reason");
        out.stats.prompt_tokens = j.value("prompt_tokens", 0);
        out.stats.new_tokens = j.value("new_tokens", 0);
        out.stats.tokens_per_s = j.value("tokens_per_s", 0.0);
    }
    return out;
}

QStringList generate_arguments(const ChatTarget& target, const ChatSettings& settings, bool chat) {
    QStringList args = {QStringLiteral("generate"), QStringLiteral("--model"), target.model_dir};
    if (!target.adapter_dir.isEmpty()) args << QStringLiteral("--adapter") << target.adapter_dir;
    if (!target.tokenizer.isEmpty()) args << QStringLiteral("--tokenizer") << target.tokenizer;
    args << QStringLiteral("--prompts") << QStringLiteral("-") << QStringLiteral("--stream");
    if (chat) args << QStringLiteral("--chat");
    args << QStringLiteral("--max-new-tokens") << QString::number(settings.max_new_tokens);
    args << QStringLiteral("--temperature") << QString::number(settings.temperature);
    args << QStringLiteral("--top-p") << QString::number(settings.top_p);
    args << QStringLiteral("--top-k") << QString::number(settings.top_k);
    if (!settings.device.isEmpty()) args << QStringLiteral("--device") << settings.device;
    return args;
}

QByteArray request_line(const std::vector<ChatMessage>& messages, const QString& system, bool chat) {
    nlohmann::json request;
    if (chat) {
        nlohmann::json list = nlohmann::json::array();
        if (!system.isEmpty()) list.push_back({{"role", "system"}, {"content", system.toStdString()}});
        for (const ChatMessage& m : messages)
            list.push_back({{"role", m.role.toStdString()}, {"content", m.content.toStdString()}});
        request["messages"] = std::move(list);
    } else {
        request["text"] = messages.empty() ? std::string() : messages.back().content.toStdString();
    }
    return QByteArray::fromStdString(request.dump()) + '\n';
}

ChatSession::ChatSession(ChatTransport* transport, QObject* parent) : QObject(parent), transport_(transport) {
    qRegisterMetaType<ChatStats>();
    transport_->setParent(this);
    connect(transport_, &ChatTransport::started, this, [this] {
        emit notice(tr("Generator started on %1; loading %2").arg(transport_->where(), target_.label));
        if (waiting_) write_request();
    });
    connect(transport_, &ChatTransport::output, this, &ChatSession::on_output);
    connect(transport_, &ChatTransport::diagnostics, this, &ChatSession::on_diagnostics);
    connect(transport_, &ChatTransport::ended, this, &ChatSession::on_ended);
}

ChatSession::~ChatSession() = default;

void ChatSession::set_target(const ChatTarget& target) {
    target_ = target;
    chat_ = true;  // a new model: try its chat template again
    end_process();
}

void ChatSession::set_settings(const ChatSettings& settings) {
    if (settings == settings_) return;
    settings_ = settings;
    end_process();
}

bool ChatSession::send(const QString& text) {
    if (waiting_ || target_.model_dir.isEmpty() || text.trimmed().isEmpty()) return false;
    messages_.push_back({QStringLiteral("user"), text});
    reply_.clear();
    waiting_ = true;
    emit reply_started();
    if (!transport_->running()) {
        start_process();  // the request goes once it started
    } else if (!ending_) {
        write_request();
    }  // else: the old process is ending; on_ended() starts the new one
    return true;
}

void ChatSession::stop() {
    if (!transport_->running()) return;
    ending_ = true;
    if (waiting_) {
        waiting_ = false;
        if (reply_.isEmpty()) {
            messages_.pop_back();  // nothing came: the question is taken back
        } else {
            messages_.push_back({QStringLiteral("assistant"), reply_});
        }
        ChatStats stats;
        stats.finish_reason = QStringLiteral("stopped");
        emit reply_finished(stats);
    }
    transport_->stop();
}

void ChatSession::clear() {
    if (waiting_) stop();
    messages_.clear();
}

void ChatSession::start_process() {
    any_line_ = false;
    ending_ = false;
    out_buffer_.clear();
    err_buffer_.clear();
    err_tail_.clear();
    transport_->start(generate_arguments(target_, settings_, chat_));
}

void ChatSession::end_process() {
    if (transport_->running()) stop();
}

void ChatSession::write_request() {
    transport_->write(request_line(messages_, settings_.system, chat_));
}

void ChatSession::on_output(const QByteArray& bytes) {
    out_buffer_ += bytes;
    for (qsizetype nl; (nl = out_buffer_.indexOf('\n')) >= 0;) {
        const QByteArray line = out_buffer_.left(nl).trimmed();
        out_buffer_.remove(0, nl + 1);
        if (!line.isEmpty()) handle_line(line);
    }
}

void ChatSession::handle_line(const QByteArray& line) {
    // The rest of a process ended on purpose (a stopped reply) never reaches the next request.
    if (ending_) return;
    any_line_ = true;
    const GeneratorLine parsed = parse_generator_line(line);
    switch (parsed.kind) {
        case GeneratorLine::Kind::kMalformed:
            emit notice(tr("Skipped a line that is not the generator's: %1").arg(parsed.text.left(200)));
            return;
        case GeneratorLine::Kind::kDelta:
            if (!waiting_) return;
            reply_ += parsed.text;
            emit delta(parsed.text);
            return;
        case GeneratorLine::Kind::kFinal:
            if (!waiting_) return;
            waiting_ = false;
            // The final text is the whole reply (deltas may hold back a partial character or a stop string).
            reply_ = parsed.text;
            messages_.push_back({QStringLiteral("assistant"), reply_});
            emit reply_finished(parsed.stats);
            return;
        case GeneratorLine::Kind::kError:
            if (!waiting_) return;
            waiting_ = false;
            messages_.pop_back();
            emit reply_failed(parsed.text);
            return;
    }
}

void ChatSession::on_diagnostics(const QByteArray& bytes) {
    err_buffer_ += bytes;
    for (qsizetype nl; (nl = err_buffer_.indexOf('\n')) >= 0;) {
        const QString line = QString::fromUtf8(err_buffer_.left(nl)).trimmed();
        err_buffer_.remove(0, nl + 1);
        if (line.isEmpty()) continue;
        err_tail_ << line;
        if (err_tail_.size() > kStderrTailLines) err_tail_.removeFirst();
        emit notice(line);
    }
}

void ChatSession::on_ended(int exit_code, const QString& error) {
    if (!err_buffer_.trimmed().isEmpty()) err_tail_ << QString::fromUtf8(err_buffer_).trimmed();
    const bool expected = ending_;
    ending_ = false;
    if (expected) {
        emit process_ended(exit_code, true);
        if (waiting_) start_process();  // a message sent while the old process was ending
        return;
    }
    const QString stderr_text = err_tail_.join(QLatin1Char('\n'));
    // A model without a chat template: the same question again, as plain text without --chat.
    if (chat_ && !any_line_ && waiting_ && exit_code == chat::kExitNoChatTemplate) {
        chat_ = false;
        emit notice(tr("%1 has no chat template: each message goes to it alone as plain text, without the "
                       "conversation before it.")
                        .arg(target_.label));
        start_process();
        return;
    }
    if (waiting_) {
        waiting_ = false;
        messages_.pop_back();
        QString why =
            error.isEmpty()
                ? tr("the generator ended (exit code %1) before the reply was complete").arg(exit_code)
                : error;
        if (!stderr_text.isEmpty()) why += QStringLiteral(":\n") + stderr_text;
        emit reply_failed(why);
    }
    emit process_ended(exit_code, false);
}

}  // namespace slipway::app
