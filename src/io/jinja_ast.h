// The syntax tree of a parsed Jinja template: expressions and statements, each one generic
// node type with a kind, so that the parser and interpreter stay short.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/jinja_value.h"

namespace pagoda::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  kLiteral,   // value
  kName,      // name
  kList,      // args
  kTuple,     // args
  kDict,      // args: key, value, key, value...
  kUnary,     // op ("-", "+", "not"), args[0]
  kBinary,    // op (+ - * / // % ** ~ and or), args[0], args[1]
  kCompare,   // args[0] then ops[i] with args[i + 1]
  kCond,      // args: then, condition, else (else may be null)
  kGetAttr,   // args[0].name
  kGetItem,   // args[0][args[1]]
  kSlice,     // args[0][args[1]:args[2]:args[3]] (any may be null)
  kCall,      // args[0](args[1..], kwargs)
  kFilter,    // name, args[0] is the input (null in a filter block), args[1..], kwargs
  kTest,      // name, negated, args[0] is the input, args[1..], kwargs
};

struct Expr {
  ExprKind kind;
  int line = 0;
  Value value;
  std::string name;  // name, attribute, filter or test, operator
  std::vector<std::string> ops;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  bool negated = false;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind {
  kText,         // text
  kPrint,        // expr
  kIf,           // expr, body, else_body (elif is a nested kIf)
  kFor,          // targets, expr (iterable), cond, body, else_body
  kSet,          // targets (or target for ns.attr), expr
  kSetBlock,     // targets, body, filter (a kFilter chain with null input, may be null)
  kMacro,        // name, params, body
  kCallBlock,    // expr (the call), params (of caller), body
  kFilterBlock,  // filter, body
  kBreak,
  kContinue,
  kScope,        // body (generation blocks, with blocks)
};

struct Param {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct Stmt {
  StmtKind kind;
  int line = 0;
  std::string text;
  std::string name;
  std::vector<std::string> targets;
  ExprPtr target;  // kSet: a namespace attribute (kGetAttr), else null
  ExprPtr expr;
  ExprPtr cond;
  ExprPtr filter;
  std::vector<Param> params;
  std::vector<std::pair<std::string, ExprPtr>> with_vars;  // kScope for `with`
  Body body;
  Body else_body;
};

}  // namespace pagoda::jinja
