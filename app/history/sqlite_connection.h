// One SQLite connection over the C API, and its prepared statements: values bound in order, rows read
// column by column, and every error a Status with SQLite's own reason ("database is locked", "database or
// disk is full"). What the run history runs its SQL through; Qt-free, so the CLI and the app share it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "contract/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace slipway::app {

// A value bound to a statement's "?": NULL, an integer, a real or text.
class SqlValue {
public:
    enum class Type { kNull, kInteger, kReal, kText };

    SqlValue() = default;  // NULL
    SqlValue(int v) : type_(Type::kInteger), integer_(v) {}
    SqlValue(int64_t v) : type_(Type::kInteger), integer_(v) {}
    SqlValue(double v) : type_(Type::kReal), real_(v) {}
    SqlValue(std::string v) : type_(Type::kText), text_(std::move(v)) {}
    SqlValue(const char* v) : type_(Type::kText), text_(v) {}

    // Empty text is stored as NULL.
    static SqlValue text_or_null(const std::string& text);
    // An unknown time (0) is stored as NULL.
    static SqlValue time_or_null(int64_t ms);
    // NaN (an unknown sample count or step) is stored as NULL.
    static SqlValue real_or_null(double v);

    Type type() const { return type_; }
    int64_t integer() const { return integer_; }
    double real() const { return real_; }
    const std::string& text() const { return text_; }

private:
    Type type_ = Type::kNull;
    int64_t integer_ = 0;
    double real_ = 0;
    std::string text_;
};

// A prepared statement of one connection. Rows are read while stepping: a result of millions of points
// is never copied whole.
class SqlStatement {
public:
    SqlStatement(SqlStatement&& other) noexcept;
    SqlStatement& operator=(SqlStatement&&) = delete;
    SqlStatement(const SqlStatement&) = delete;
    ~SqlStatement();

    // Binds `values` to the "?"s in order, after resetting the statement (so it runs again).
    [[nodiscard]] Status bind(std::initializer_list<SqlValue> values);
    // The next row: true while there is one, false when done; an error names `what` went wrong.
    [[nodiscard]] Result<bool> next();
    // Steps to the end, discarding rows (an INSERT, UPDATE, DELETE).
    [[nodiscard]] Status run();

    bool is_null(int column) const;
    int64_t integer(int column) const;   // 0 for NULL
    double real(int column) const;       // 0 for NULL
    std::string text(int column) const;  // empty for NULL

private:
    friend class SqliteConnection;
    SqlStatement(sqlite3_stmt* statement, std::string what) : statement_(statement), what_(std::move(what)) {}

    sqlite3_stmt* statement_;
    std::string what_;  // prefixes errors: "cannot store points of run 3"
};

class SqliteConnection {
public:
    // Opens (creating if needed) the database file at `path`; an error reads "<path>: <SQLite's reason>".
    [[nodiscard]] static Result<std::unique_ptr<SqliteConnection>> open(const std::string& path);
    ~SqliteConnection();
    SqliteConnection(const SqliteConnection&) = delete;
    SqliteConnection& operator=(const SqliteConnection&) = delete;

    // Prepares `sql`; its errors, and those of running it, read "<what>: <SQLite's reason>".
    [[nodiscard]] Result<SqlStatement> prepare(const std::string& sql, std::string what);
    // Prepares, binds and runs `sql` to its end.
    [[nodiscard]] Status run(const std::string& sql, std::initializer_list<SqlValue> values,
                             std::string what);
    // The first column of the first row of `sql`; nullopt when there is no row. The statement is done when
    // this returns, so a write may follow at once (an open read would keep a write from waiting for a lock).
    [[nodiscard]] Result<std::optional<int64_t>> first_integer(const std::string& sql,
                                                               std::initializer_list<SqlValue> values,
                                                               std::string what);
    // The same where a row is certain (PRAGMA user_version, COUNT(*)); an error when there is none.
    [[nodiscard]] Result<int64_t> integer(const std::string& sql, std::initializer_list<SqlValue> values,
                                          std::string what);
    // Runs `steps`, each taking `values`, in one transaction: all or nothing.
    [[nodiscard]] Status run_in_transaction(std::initializer_list<const char*> steps,
                                            std::initializer_list<SqlValue> values, const std::string& what);

    [[nodiscard]] Status begin(const std::string& what);  // BEGIN
    [[nodiscard]] Status commit(const std::string& what);
    void rollback();  // after a failure: the failure is the error that counts

    // How long a statement waits for another connection's lock before failing with "database is locked".
    [[nodiscard]] Status set_busy_timeout(int ms);
    int64_t last_insert_id() const;

private:
    explicit SqliteConnection(sqlite3* db) : db_(db) {}
    Status error(const std::string& what) const;

    sqlite3* db_;
};

}  // namespace slipway::app
