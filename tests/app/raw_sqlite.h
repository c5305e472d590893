// A second SQLite connection to a history file, beside the RunHistory under test: it writes files as
// earlier Slipways did, reads what RunHistory stored, and injects faults (holds the write lock). It uses
// SQLite's C API directly, not the history's own wrapper, so it checks the file rather than our reading of
// it.
#pragma once

#include <sqlite3.h>

#include <QString>
#include <QVariant>

namespace slipway::app::testing_util {

class RawSqlite {
public:
    explicit RawSqlite(const QString& path) {
        sqlite3_open_v2(path.toUtf8().constData(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    }
    ~RawSqlite() { sqlite3_close_v2(db_); }
    RawSqlite(const RawSqlite&) = delete;
    RawSqlite& operator=(const RawSqlite&) = delete;

    // Empty when `sql` ran; SQLite's reason otherwise.
    QString exec(const QString& sql) {
        char* error = nullptr;
        if (sqlite3_exec(db_, sql.toUtf8().constData(), nullptr, nullptr, &error) == SQLITE_OK) return {};
        const QString reason = QString::fromUtf8(error != nullptr ? error : sqlite3_errmsg(db_));
        sqlite3_free(error);
        return reason;
    }
    // The first column of the first row, e.g. of "PRAGMA user_version"; invalid when there is none (or
    // NULL).
    QVariant value(const QString& sql) {
        sqlite3_stmt* statement = nullptr;
        QVariant v;
        if (sqlite3_prepare_v2(db_, sql.toUtf8().constData(), -1, &statement, nullptr) == SQLITE_OK &&
            sqlite3_step(statement) == SQLITE_ROW) {
            switch (sqlite3_column_type(statement, 0)) {
                case SQLITE_INTEGER:
                    v = QVariant(static_cast<qlonglong>(sqlite3_column_int64(statement, 0)));
                    break;
                case SQLITE_FLOAT:
                    v = QVariant(sqlite3_column_double(statement, 0));
                    break;
                case SQLITE_TEXT:
                    v = QVariant(
                        QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0))));
                    break;
                default:
                    break;
            }
        }
        sqlite3_finalize(statement);
        return v;
    }

private:
    sqlite3* db_ = nullptr;
};

}  // namespace slipway::app::testing_util
