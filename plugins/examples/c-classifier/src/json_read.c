/* The reader half of json.h: a JSON reader that validates as it goes,
 * without recursion. */
#include "json.h"

#include <limits.h>
#include <string.h>

static void jr_fail(jr *r, const char *msg)
{
	if (!r->err)
		r->err = msg;
}

static void ws(jr *r)
{
	while (r->i < r->n) {
		char c = r->s[r->i];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return;
		r->i++;
	}
}

/* peek returns the next non-space byte, or 0 at the end (a NUL byte in
 * the text reads as 0 too, which every caller treats as an error). */
static char peek(jr *r)
{
	ws(r);
	return r->i < r->n ? r->s[r->i] : 0;
}

static int expect(jr *r, char c, const char *msg)
{
	if (r->err)
		return 0;
	if (peek(r) != c) {
		jr_fail(r, msg);
		return 0;
	}
	r->i++;
	return 1;
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;
	for (int j = 0; j < 4; j++) {
		char c = s[j];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return 0;
	}
	*out = v;
	return 1;
}

static void put_utf8(buf *b, unsigned cp)
{
	char u[4];
	size_t k;
	if (cp < 0x80) {
		u[0] = (char)cp, k = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), k = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f)), k = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), k = 4;
	}
	buf_put(b, u, k);
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
/* plain8 reports whether the 8 bytes at s[i] hold no '"', no '\\' and no
 * control character: a string's ordinary text is then skipped 8 bytes per
 * loop turn. It matters under wazero, which checks for a timeout at every
 * loop header (docs/PLUGINS.md §4): a call with a 3.8 MiB tail took 0.16 s
 * byte by byte, 0.05 s this way (BenchmarkClassify4MiB). */
static int plain8(const char *s, size_t n, size_t i)
{
	uint64_t w;
	if (n - i < 8)
		return 0;
	memcpy(&w, s + i, 8);
	uint64_t quote = w ^ (ONES * '"'), bslash = w ^ (ONES * '\\');
	uint64_t zero = ((quote - ONES) & ~quote) | ((bslash - ONES) & ~bslash);
	uint64_t ctl = (w - ONES * 0x20) & ~w; /* a byte below 0x20 */
	return ((zero | ctl) & HIGHS) == 0;
}

/* str reads a string at the cursor into out (NULL: only check and skip). */
static void str(jr *r, buf *out)
{
	if (!expect(r, '"', "expected a string"))
		return;
	size_t run = r->i;
	while (r->i < r->n) {
		if (plain8(r->s, r->n, r->i)) {
			r->i += 8;
			continue;
		}
		unsigned char c = (unsigned char)r->s[r->i];
		if (c >= 0x20 && c != '"' && c != '\\') {
			r->i++;
			continue;
		}
		if (out)
			buf_put(out, r->s + run, r->i - run);
		if (c == '"') {
			r->i++;
			return;
		}
		if (c < 0x20) {
			jr_fail(r, "control character in a string");
			return;
		}
		/* a backslash escape */
		if (r->i + 1 >= r->n)
			break;
		char e = r->s[r->i + 1];
		const char *lit = NULL;
		r->i += 2;
		switch (e) {
		case '"': lit = "\""; break;
		case '\\': lit = "\\"; break;
		case '/': lit = "/"; break;
		case 'b': lit = "\b"; break;
		case 'f': lit = "\f"; break;
		case 'n': lit = "\n"; break;
		case 'r': lit = "\r"; break;
		case 't': lit = "\t"; break;
		case 'u': {
			unsigned cp, lo;
			if (r->i + 4 > r->n || !hex4(r->s + r->i, &cp)) {
				jr_fail(r, "bad \\u escape in a string");
				return;
			}
			r->i += 4;
			if (cp >= 0xd800 && cp <= 0xdbff && r->i + 6 <= r->n && r->s[r->i] == '\\' &&
			    r->s[r->i + 1] == 'u' && hex4(r->s + r->i + 2, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				r->i += 6;
			} else if (cp >= 0xd800 && cp <= 0xdfff) {
				cp = 0xfffd; /* a lone surrogate, as encoding/json reads it */
			}
			if (out)
				put_utf8(out, cp);
			break;
		}
		default:
			jr_fail(r, "bad escape in a string");
			return;
		}
		if (lit && out)
			buf_put(out, lit, 1);
		run = r->i;
	}
	jr_fail(r, "unterminated string");
}

static int digit(jr *r)
{
	return r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9';
}

/* number checks the grammar of a number at the cursor and returns where
 * its integer digits start (after any '-'), or -1. */
static long number(jr *r)
{
	ws(r);
	if (r->i < r->n && r->s[r->i] == '-')
		r->i++;
	long start = (long)r->i;
	if (!digit(r)) {
		jr_fail(r, "bad number");
		return -1;
	}
	if (r->s[r->i] == '0')
		r->i++;
	else
		while (digit(r))
			r->i++;
	if (r->i < r->n && r->s[r->i] == '.') {
		r->i++;
		if (!digit(r)) {
			jr_fail(r, "bad number");
			return -1;
		}
		while (digit(r))
			r->i++;
	}
	if (r->i < r->n && (r->s[r->i] == 'e' || r->s[r->i] == 'E')) {
		r->i++;
		if (r->i < r->n && (r->s[r->i] == '+' || r->s[r->i] == '-'))
			r->i++;
		if (!digit(r)) {
			jr_fail(r, "bad number");
			return -1;
		}
		while (digit(r))
			r->i++;
	}
	return start;
}

static void literal(jr *r, const char *word)
{
	size_t k = strlen(word);
	if (r->n - r->i < k || memcmp(r->s + r->i, word, k) != 0) {
		jr_fail(r, "invalid value");
		return;
	}
	r->i += k;
}

void jr_skip(jr *r)
{
	static char stack[JR_MAX_DEPTH]; /* '{' or '[' per open container */
	size_t depth = 0;
	for (;;) {
		if (r->err)
			return;
		/* a value starts here */
		switch (peek(r)) {
		case '{':
		case '[': {
			char open = r->s[r->i++];
			char close = open == '{' ? '}' : ']';
			if (peek(r) == close) {
				r->i++;
				break;
			}
			if (depth == JR_MAX_DEPTH) {
				jr_fail(r, "nested too deeply");
				return;
			}
			stack[depth++] = open;
			if (open == '{') {
				str(r, NULL);
				expect(r, ':', "expected ':' after an object key");
			}
			continue;
		}
		case '"': str(r, NULL); break;
		case 't': literal(r, "true"); break;
		case 'f': literal(r, "false"); break;
		case 'n': literal(r, "null"); break;
		case 0: jr_fail(r, "unexpected end of input"); return;
		default: number(r); break;
		}
		/* a value ended: close containers until one continues */
		for (;;) {
			if (r->err || depth == 0)
				return;
			char c = peek(r);
			char top = stack[depth - 1];
			if (c == ',') {
				r->i++;
				if (top == '{') {
					str(r, NULL);
					expect(r, ':', "expected ':' after an object key");
				}
				break;
			}
			if ((top == '{' && c == '}') || (top == '[' && c == ']')) {
				r->i++;
				depth--;
				continue;
			}
			jr_fail(r, top == '{' ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array");
			return;
		}
	}
}

void jr_object_begin(jr *r)
{
	expect(r, '{', "expected a JSON object");
	r->first = 1;
}

int jr_object_next(jr *r, buf *key)
{
	if (r->err)
		return 0;
	if (peek(r) == '}') {
		r->i++;
		return 0;
	}
	if (!r->first && !expect(r, ',', "expected ',' or '}' in an object"))
		return 0;
	r->first = 0;
	buf_reset(key);
	str(r, key);
	expect(r, ':', "expected ':' after an object key");
	return r->err == NULL;
}

void jr_string(jr *r, buf *out)
{
	buf_reset(out);
	if (peek(r) == '"')
		str(r, out);
	else
		jr_skip(r);
}

long long jr_int(jr *r)
{
	char c = peek(r);
	if (c != '-' && (c < '0' || c > '9')) {
		jr_skip(r);
		return 0;
	}
	int neg = c == '-';
	long start = number(r);
	if (start < 0)
		return 0;
	long long v = 0;
	for (size_t j = (size_t)start; j < r->n && r->s[j] >= '0' && r->s[j] <= '9'; j++) {
		if (v > (LLONG_MAX - 9) / 10)
			return neg ? LLONG_MIN : LLONG_MAX; /* clamp: far past any exit code */
		v = v * 10 + (r->s[j] - '0');
	}
	return neg ? -v : v;
}

int jr_bool(jr *r)
{
	char c = peek(r);
	if (c == 't') {
		literal(r, "true");
		return 1;
	}
	jr_skip(r);
	return 0;
}

char jr_peek(jr *r) { return peek(r); }

void jr_end(jr *r)
{
	ws(r);
	if (!r->err && r->i < r->n)
		jr_fail(r, "text after the JSON value");
}
