// The JSON reader (hal/io/json_reader.h): the grammar, every escape, exact
// integers, the nesting limit on hostile input, and round trips of what the
// writer (hal/io/json_writer.h) produces.
#include "hal/io/json_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "hal/error.h"
#include "hal/io/json_writer.h"
#include "test_helpers.h"

namespace {

using hal::io::JsonValue;
using hal::io::parse_json;
using hal::test::contains;

JsonValue parse(std::string_view text) { return parse_json(text, "test.json"); }

std::string io_error_of(std::string_view text) {
  try {
    parse(text);
  } catch (const hal::Error& e) {
    EXPECT_EQ(e.code(), hal::ErrorCode::io_error) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for " << text;
  return "";
}

TEST(JsonReader, ParsesEveryKindInOrder) {
  const JsonValue v = parse(R"( {"a": [1, -2.5, 3e2, true, false, null], "b": {"c": "d"}, "e": ""} )");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.members().size(), 3u);
  EXPECT_EQ(v.members()[0].key, "a");
  EXPECT_EQ(v.members()[2].key, "e");
  const JsonValue* a = v.find("a");
  ASSERT_TRUE(a && a->is_array());
  ASSERT_EQ(a->items().size(), 6u);
  EXPECT_EQ(a->items()[0].integer(), 1);
  EXPECT_EQ(a->items()[1].number(), -2.5);
  EXPECT_FALSE(a->items()[1].integer());
  EXPECT_EQ(a->items()[2].number(), 300.0);
  EXPECT_FALSE(a->items()[2].integer()) << "an exponent is not an integer literal";
  EXPECT_TRUE(a->items()[3].is_bool() && a->items()[3].boolean());
  EXPECT_TRUE(a->items()[4].is_bool() && !a->items()[4].boolean());
  EXPECT_TRUE(a->items()[5].is_null());
  EXPECT_EQ(v.find("b")->find("c")->text(), "d");
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(JsonReader, IntegersAreExactBeyondDoublePrecision) {
  const JsonValue v = parse("[9007199254740993, -9223372036854775808, 9223372036854775808]");
  EXPECT_EQ(v.items()[0].integer(), 9007199254740993LL);
  EXPECT_EQ(v.items()[1].integer(), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(v.items()[2].integer()) << "2^63 does not fit int64";
  EXPECT_EQ(v.items()[2].number(), 9223372036854775808.0);
}

TEST(JsonReader, DecodesEveryEscape) {
  const JsonValue v = parse(R"(["\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20ac", "\ud83d\ude00", "\u0000x"])");
  EXPECT_EQ(v.items()[0].text(), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(v.items()[1].text(), "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(v.items()[2].text(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(v.items()[3].text(), std::string("\0x", 2));
}

TEST(JsonReader, ReadsBackWhatTheWriterEscapes) {
  std::string every;
  for (int c = 1; c < 0x80; ++c) every += static_cast<char>(c);
  every += "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // UTF-8 above 0xFF passes through the writer
  const JsonValue v = parse("{" + hal::io::json_string(every) + ": " + hal::io::json_string(every) + "}");
  ASSERT_EQ(v.members().size(), 1u);
  EXPECT_EQ(v.members()[0].key, every);
  EXPECT_EQ(v.members()[0].value.text(), every);
}

TEST(JsonReader, RefusesMalformedText) {
  for (const char* bad : {"", "[", "{\"a\" 1}", "[1,]", "{\"a\":1,}", "01", "1.", "-", "1e", "+1", ".5", "tru", "nul",
                          "[1] 2", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12g4\"", "'a'", "{1: 2}", "[1 2]"}) {
    const std::string msg = io_error_of(bad);
    EXPECT_TRUE(contains(msg, "'test.json': malformed JSON at byte")) << bad << " -> " << msg;
  }
}

TEST(JsonReader, RefusesWhatRfc8259Forbids) {
  EXPECT_TRUE(contains(io_error_of("\"a\nb\""), "control character"));
  EXPECT_TRUE(contains(io_error_of(R"("\ud83d")"), "high surrogate"));
  EXPECT_TRUE(contains(io_error_of(R"("\ud83dx")"), "high surrogate"));
  EXPECT_TRUE(contains(io_error_of(R"("\ude00")"), "low surrogate"));
  EXPECT_TRUE(contains(io_error_of(R"({"a": 1, "a": 2})"), "duplicate member \"a\""));
  EXPECT_TRUE(contains(io_error_of("1e999"), "out of range"));
}

TEST(JsonReader, BoundsTheNesting) {
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_NO_THROW(parse(ok));
  const std::string deep = std::string(65, '[') + std::string(65, ']');
  EXPECT_TRUE(contains(io_error_of(deep), "nesting deeper than 64"));
  // Hostile: far deeper than any stack; must be an error, not a crash.
  const std::string hostile(1 << 20, '[');
  EXPECT_TRUE(contains(io_error_of(hostile), "nesting deeper than 64"));
  const std::string objects = [] {
    std::string s;
    for (int i = 0; i < 100000; ++i) s += "{\"a\":";
    return s;
  }();
  EXPECT_TRUE(contains(io_error_of(objects), "nesting deeper than 64"));
}

TEST(JsonReader, BoundsTheSize) {
  hal::io::JsonLimits limits;
  limits.max_bytes = 8;
  EXPECT_NO_THROW(parse_json("[1,2,3]", "small.json", limits));
  try {
    parse_json("[1,2,3,4]", "big.json", limits);
    ADD_FAILURE() << "no error";
  } catch (const hal::Error& e) {
    EXPECT_TRUE(contains(e.what(), "'big.json'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "limit of 8")) << e.what();
  }
}

}  // namespace
