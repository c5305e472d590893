// The parsed form of a chat template (internal to engine/chat): expression and statement nodes, with the
// line and column of each for error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace slipway::chat {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Where {
    int line = 1;
    int column = 1;
};

// One expression node. `kind` picks which fields mean something.
struct Expr {
    enum class Kind {
        kLiteral,    // value
        kName,       // name
        kList,       // items
        kDict,       // items: key, value, key, value...
        kGetAttr,    // object, name
        kGetItem,    // object, items[0] (index)
        kSlice,      // object, items[0..2]: start, stop, step (null ptr when absent)
        kCall,       // object (callee), items (positional), kwargs
        kFilter,     // object (input, may be null inside a filter block), name, items, kwargs
        kTest,       // object, name, items; negated
        kUnary,      // op ("not", "-", "+"), object
        kBinary,     // op, items[0], items[1]
        kCondition,  // items: then, condition, else (else may be null)
    };
    Kind kind = Kind::kLiteral;
    Where where;
    nlohmann::json value;
    std::string name;
    std::string op;
    ExprPtr object;
    std::vector<ExprPtr> items;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    bool negated = false;
};

// One statement node; a template body is a list of them.
struct TemplateNode {
    enum class Kind {
        kText,    // text
        kOutput,  // expr
        kIf,      // branches: (condition, body)...; else_body
        kFor,     // targets, expr (iterable), condition (may be null), body, else_body
        kSet,     // targets (one name, or "ns" + attribute), expr; or body when a block set
        kBreak,
        kContinue,
        kBlock,  // body (the root)
    };
    Kind kind = Kind::kBlock;
    Where where;
    std::string text;
    ExprPtr expr;
    ExprPtr condition;
    std::vector<std::string> targets;
    std::string attribute;  // set ns.attribute = ...
    std::vector<std::pair<ExprPtr, std::vector<std::shared_ptr<const TemplateNode>>>> branches;
    std::vector<std::shared_ptr<const TemplateNode>> body;
    std::vector<std::shared_ptr<const TemplateNode>> else_body;
};

// The filters and tests the evaluator implements (template_render.cpp); the parser rejects others up
// front, as Jinja2 does when it compiles a template ("No filter named ...").
inline bool is_supported_filter(const std::string& name) {
    static const char* const kFilters[] = {
        "default", "d",          "length", "count",   "string",     "tojson",     "items", "list", "first",
        "last",    "join",       "select", "reject",  "selectattr", "rejectattr", "map",   "trim", "upper",
        "lower",   "capitalize", "title",  "replace", "int",        "abs",        "safe"};
    for (const char* f : kFilters)
        if (name == f) return true;
    return false;
}
inline bool is_supported_test(const std::string& name) {
    static const char* const kTests[] = {
        "defined", "undefined", "none",        "string",  "number",   "integer",  "float",
        "boolean", "true",      "false",       "mapping", "iterable", "sequence", "callable",
        "odd",     "even",      "divisibleby", "equalto", "eq",       "==",       "sameas",
        "ne",      "!=",        "in",          "lower",   "upper"};
    for (const char* t : kTests)
        if (name == t) return true;
    return false;
}

using NodePtr = std::shared_ptr<const TemplateNode>;
using NodeList = std::vector<NodePtr>;

}  // namespace slipway::chat
