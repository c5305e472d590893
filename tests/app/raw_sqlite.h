// A second SQLite connection to a history file, beside the RunHistory under test: it writes files as
// earlier Slipways did, reads what RunHistory stored, and injects faults (holds the write lock).
#pragma once

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QVariant>

namespace slipway::app::testing_util {

class RawSqlite {
public:
    explicit RawSqlite(const QString& path) : name_(QStringLiteral("raw_sqlite_%1").arg(next_id()++)) {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name_);
        db.setDatabaseName(path);
        db.open();
    }
    ~RawSqlite() {
        QSqlDatabase::database(name_, false).close();
        QSqlDatabase::removeDatabase(name_);
    }
    RawSqlite(const RawSqlite&) = delete;
    RawSqlite& operator=(const RawSqlite&) = delete;

    // Empty when `sql` ran; SQLite's reason otherwise.
    QString exec(const QString& sql) {
        QSqlQuery q(QSqlDatabase::database(name_));
        return q.exec(sql) ? QString() : q.lastError().text();
    }
    // The first column of the first row, e.g. of "PRAGMA user_version"; invalid when there is none.
    QVariant value(const QString& sql) {
        QSqlQuery q(QSqlDatabase::database(name_));
        return q.exec(sql) && q.next() ? q.value(0) : QVariant();
    }

private:
    static int& next_id() {
        static int id = 0;
        return id;
    }
    QString name_;
};

}  // namespace slipway::app::testing_util
