package org.stairsense.core;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Just enough JSON to read the flat configuration object that {@code stairsense export} writes
 * into the model's {@code stairsense.config} metadata entry (Python's {@code json.dumps} of
 * {@code PipelineConfig.to_dict()}): an object whose values are numbers, strings, booleans or null.
 *
 * <p>No dependency on Android's {@code org.json}, so the core runs on any JVM. Numbers come back
 * as {@code Double}: Python writes floats with {@code repr}, the shortest string that reads back
 * to the same double, and {@link Double#parseDouble} reads it back exactly.
 */
public final class Json {
    private final String text;
    private int pos;

    private Json(String text) {
        this.text = text;
    }

    /** Parse a flat JSON object; nested objects or arrays are refused with the offending position. */
    public static Map<String, Object> parseFlatObject(String text) {
        Json parser = new Json(text);
        Map<String, Object> out = parser.object();
        parser.skipSpace();
        if (parser.pos != text.length()) {
            throw parser.error("trailing characters after the object");
        }
        return out;
    }

    /** Parse a JSON object of strings, such as a model's metadata map dumped by Python's {@code json.dumps}. */
    public static Map<String, String> parseStringMap(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : parseFlatObject(text).entrySet()) {
            if (!(e.getValue() instanceof String)) {
                throw new ModelConfigException("metadata value of '" + e.getKey() + "' must be a string, got " + e.getValue());
            }
            out.put(e.getKey(), (String) e.getValue());
        }
        return out;
    }

    private Map<String, Object> object() {
        skipSpace();
        expect('{');
        Map<String, Object> out = new LinkedHashMap<>();
        skipSpace();
        if (peek() == '}') {
            pos++;
            return out;
        }
        while (true) {
            skipSpace();
            String key = string();
            skipSpace();
            expect(':');
            skipSpace();
            out.put(key, value());
            skipSpace();
            char c = next();
            if (c == '}') {
                return out;
            }
            if (c != ',') {
                throw error("expected ',' or '}'");
            }
        }
    }

    private Object value() {
        char c = peek();
        if (c == '"') {
            return string();
        }
        if (text.startsWith("null", pos)) {
            pos += 4;
            return null;
        }
        if (text.startsWith("true", pos)) {
            pos += 4;
            return Boolean.TRUE;
        }
        if (text.startsWith("false", pos)) {
            pos += 5;
            return Boolean.FALSE;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            int start = pos;
            while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
                pos++;
            }
            try {
                return Double.parseDouble(text.substring(start, pos));
            } catch (NumberFormatException e) {
                throw error("bad number '" + text.substring(start, pos) + "'");
            }
        }
        if (c == 'N' || c == 'I') {
            throw error("NaN/Infinity are not valid configuration values");
        }
        throw error("expected a number, string, true, false or null (nested values are not configuration)");
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            char c = next();
            if (c == '"') {
                return out.toString();
            }
            if (c == '\\') {
                char e = next();
                switch (e) {
                    case '"': case '\\': case '/': out.append(e); break;
                    case 'n': out.append('\n'); break;
                    case 't': out.append('\t'); break;
                    case 'r': out.append('\r'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'u':
                        if (pos + 4 > text.length()) {
                            throw error("truncated \\u escape");
                        }
                        out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                        pos += 4;
                        break;
                    default: throw error("bad escape \\" + e);
                }
            } else {
                out.append(c);
            }
        }
    }

    private void skipSpace() {
        while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
            pos++;
        }
    }

    private char peek() {
        if (pos >= text.length()) {
            throw error("unexpected end of text");
        }
        return text.charAt(pos);
    }

    private char next() {
        char c = peek();
        pos++;
        return c;
    }

    private void expect(char c) {
        if (next() != c) {
            pos--;
            throw error("expected '" + c + "'");
        }
    }

    private ModelConfigException error(String what) {
        return new ModelConfigException("configuration JSON: " + what + " at character " + pos + " of: " + text);
    }
}
