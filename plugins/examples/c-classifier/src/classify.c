/* Rules for R and Julia failures. Python-centred classifiers see these
 * runs as a bare non-zero exit; each rule here finds the line that says
 * what went wrong and names the contract code (DESIGN §4) for it. */
#define _GNU_SOURCE /* memmem */
#include <string.h>

#include "classify.h"

typedef struct {
	const char *p;
	size_t n;
} slice;

static slice sl(const char *s) { return (slice){s, strlen(s)}; }

#define MAX_SUGG 4
#define MAX_DETAILS 3
#define EVIDENCE_MAX 300 /* bytes of the matched line kept as evidence */
#define NAME_MAX_LEN 200 /* bytes of a package name or path kept */
#define SEARCH_WINDOW (64 << 10)

typedef struct {
	const char *code, *confidence;
	int retryable;
	buf message;
	buf sugg[MAX_SUGG];
	int nsugg;
	slice evidence;
	const char *dkey[MAX_DETAILS];
	slice dval[MAX_DETAILS];
	int ndetails;
} failure;

/* A rule looks at one text (a stream's tail) and fills f when it matches. */
typedef int (*rule)(const input *in, slice text, failure *f);

/* find_last returns the last occurrence of needle in hay, or NULL: the
 * most recent error is the one that stopped the script. */
static const char *find_last(slice hay, const char *needle)
{
	size_t k = strlen(needle);
	const char *last = NULL, *p = hay.p, *end = hay.p + hay.n;
	while ((size_t)(end - p) >= k) {
		const char *q = memmem(p, (size_t)(end - p), needle, k);
		if (!q)
			break;
		last = q;
		p = q + 1;
	}
	return last;
}

/* line_at returns the line around pos, without its line ending and
 * surrounding spaces. */
static slice line_at(slice text, const char *pos)
{
	const char *b = pos, *e = pos, *end = text.p + text.n;
	while (b > text.p && b[-1] != '\n')
		b--;
	while (e < end && *e != '\n')
		e++;
	while (b < e && (*b == ' ' || *b == '\t'))
		b++;
	while (e > b && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return (slice){b, (size_t)(e - b)};
}

/* rest returns the part of line from `from` on: empty when from is past
 * its end (a needle's trailing space that line_at trimmed). */
static slice rest(slice line, const char *from)
{
	const char *end = line.p + line.n;
	return from < end ? (slice){from, (size_t)(end - from)} : (slice){end, 0};
}

/* clip cuts s to at most max bytes, at a UTF-8 character boundary. */
static slice clip(slice s, size_t max)
{
	if (s.n <= max)
		return s;
	size_t n = max;
	while (n > 0 && ((unsigned char)s.p[n] & 0xc0) == 0x80)
		n--;
	return (slice){s.p, n};
}

/* quoted returns the text after pos up to the closing quote: R quotes
 * names 'x' in the C locale and ‘x’ in a UTF-8 one, Julia "x". Empty when
 * no quote opens at pos or none closes on the same line. */
static slice quoted(slice text, const char *pos)
{
	static const char lq[] = "\xe2\x80\x98", rq[] = "\xe2\x80\x99";
	const char *end = text.p + text.n, *close;
	char ascii[1];
	size_t closelen = 1;
	if (pos < end && (*pos == '\'' || *pos == '"')) {
		ascii[0] = *pos++;
		close = ascii;
	} else if ((size_t)(end - pos) >= 3 && memcmp(pos, lq, 3) == 0) {
		close = rq, closelen = 3;
		pos += 3;
	} else {
		return (slice){pos, 0};
	}
	for (const char *q = pos; q + closelen <= end && *q != '\n'; q++)
		if (memcmp(q, close, closelen) == 0)
			return clip((slice){pos, (size_t)(q - pos)}, NAME_MAX_LEN);
	return (slice){pos, 0};
}

static void detail(failure *f, const char *key, slice val)
{
	if (f->ndetails < MAX_DETAILS) {
		f->dkey[f->ndetails] = key;
		f->dval[f->ndetails++] = val;
	}
}

/* suggest adds a suggestion made of the given parts (NULL-terminated
 * pairs would be heavier than this: at most three parts, p2/p3 may be
 * empty). */
static void suggest(failure *f, slice p1, slice p2, slice p3)
{
	if (f->nsugg == MAX_SUGG)
		return;
	buf *b = &f->sugg[f->nsugg++];
	buf_put(b, p1.p, p1.n);
	buf_put(b, p2.p, p2.n);
	buf_put(b, p3.p, p3.n);
}

static const slice none = {"", 0};

static void say(failure *f, slice p1, slice p2, slice p3)
{
	buf_put(&f->message, p1.p, p1.n);
	buf_put(&f->message, p2.p, p2.n);
	buf_put(&f->message, p3.p, p3.n);
}

/* gib writes bytes as GiB with one decimal ("8.0 GiB") into a static. */
static slice gib(long long bytes)
{
	static char s[32];
	unsigned long long tenths = (unsigned long long)bytes * 10 / (1ULL << 30), whole = tenths / 10;
	char tmp[24];
	int k = 0, n = 0;
	do
		tmp[k++] = (char)('0' + whole % 10);
	while ((whole /= 10) && k < 20);
	while (k)
		s[n++] = tmp[--k];
	s[n++] = '.';
	s[n++] = (char)('0' + tenths % 10);
	memcpy(s + n, " GiB", 4);
	return (slice){s, (size_t)n + 4};
}

static void memory_suggestions(const input *in, failure *f)
{
	if (in->memory_bytes > 0)
		suggest(f, sl("Raise the run's memory limit (it was "), gib(in->memory_bytes), sl(") if the machine has more to give."));
}

static void found(failure *f, const char *code, const char *conf, slice text, const char *at)
{
	f->code = code;
	f->confidence = conf;
	f->evidence = clip(line_at(text, at), EVIDENCE_MAX);
}

/* R: "Error: cannot allocate vector of size 74.5 Gb" */
static int r_memory(const input *in, slice text, failure *f)
{
	static const char needle[] = "cannot allocate vector of size ";
	const char *at = find_last(text, needle);
	if (!at)
		return 0;
	found(f, "OOM_KILLED", "0.95", text, at);
	slice l = line_at(text, at);
	const char *s = at + sizeof needle - 1;
	slice size = clip(rest(l, s), 32);
	detail(f, "language", sl("R"));
	if (size.n) {
		detail(f, "requested", size);
		say(f, sl("R could not allocate a vector of "), size, sl(": the process ran out of memory."));
	} else {
		say(f, sl("R could not allocate a vector: the process ran out of memory."), none, none);
	}
	memory_suggestions(in, f);
	suggest(f, sl("Read only the columns and rows you need (data.table::fread(select=, nrows=)) or work on the data in chunks (arrow::open_dataset) instead of loading it whole."), none, none);
	suggest(f, sl("Drop large objects you no longer need with rm() and call gc() before the next big allocation."), none, none);
	return 1;
}

/* Julia: "ERROR: LoadError: OutOfMemoryError()" */
static int julia_memory(const input *in, slice text, failure *f)
{
	const char *at = find_last(text, "OutOfMemoryError()");
	if (!at)
		return 0;
	found(f, "OOM_KILLED", "0.95", text, at);
	detail(f, "language", sl("Julia"));
	say(f, sl("Julia ran out of memory (OutOfMemoryError): an allocation failed."), none, none);
	memory_suggestions(in, f);
	suggest(f, sl("Preallocate and reuse arrays (in-place updates with .= and views) instead of allocating new ones in a loop."), none, none);
	suggest(f, sl("Use a smaller element type (Float32) or stream the data (CSV.Rows, Arrow) instead of loading it whole."), none, none);
	return 1;
}

/* R: "Error in library(ggplot2) : there is no package called ‘ggplot2’" */
static int r_package(const input *in, slice text, failure *f)
{
	static const char needle[] = "there is no package called ";
	(void)in;
	const char *at = find_last(text, needle);
	if (!at)
		return 0;
	slice name = quoted(text, at + sizeof needle - 1);
	if (!name.n)
		return 0;
	found(f, "MODULE_NOT_FOUND", "0.95", text, at);
	detail(f, "module", name);
	detail(f, "language", sl("R"));
	say(f, sl("R could not load package "), name, sl(": it is not installed in this R library."));
	suggest(f, sl("install.packages(\""), name, sl("\")"));
	suggest(f, sl("For a Bioconductor package: BiocManager::install(\""), name, sl("\")"));
	suggest(f, sl("With an renv project, run renv::restore() so the project's library matches its lockfile."), none, none);
	return 1;
}

/* Julia: "ArgumentError: Package CSV not found in current path." */
static int julia_package(const input *in, slice text, failure *f)
{
	static const char word[] = "Package ";
	(void)in;
	const char *at = find_last(text, " not found in current path");
	if (!at)
		return 0;
	slice l = line_at(text, at);
	if (at < l.p) /* the line is only spaces before the needle */
		return 0;
	const char *p = find_last((slice){l.p, (size_t)(at - l.p)}, word);
	if (!p)
		return 0;
	slice name = clip((slice){p + sizeof word - 1, (size_t)(at - p - (sizeof word - 1))}, NAME_MAX_LEN);
	if (!name.n || memchr(name.p, ' ', name.n))
		return 0;
	found(f, "MODULE_NOT_FOUND", "0.95", text, at);
	detail(f, "module", name);
	detail(f, "language", sl("Julia"));
	say(f, sl("Julia could not load package "), name, sl(": it is not in the active environment."));
	suggest(f, sl("import Pkg; Pkg.add(\""), name, sl("\")"));
	suggest(f, sl("With a Project.toml, start julia with --project=. and run Pkg.instantiate() once."), none, none);
	return 1;
}

/* R: "cannot open file 'data.csv': No such file or directory"
 * Julia: "SystemError: opening file \"data.csv\": No such file or directory" */
static int missing_file(const input *in, slice text, failure *f)
{
	static const struct {
		const char *needle, *language;
	} forms[] = {{"cannot open file ", "R"}, {"SystemError: opening file ", "Julia"}};
	(void)in;
	for (size_t j = 0; j < sizeof forms / sizeof forms[0]; j++) {
		const char *at = find_last(text, forms[j].needle);
		if (!at)
			continue;
		slice l = line_at(text, at);
		if (!find_last(l, "No such file or directory"))
			continue;
		slice path = quoted(text, at + strlen(forms[j].needle));
		if (!path.n)
			continue;
		found(f, "FILE_NOT_FOUND", "0.95", text, at);
		detail(f, "path", path);
		detail(f, "language", sl(forms[j].language));
		say(f, sl(forms[j].language), sl(" could not open "), path);
		say(f, sl(": no such file or directory."), none, none);
		suggest(f, sl("Check the path: a relative one is resolved against the directory the run started in."), none, none);
		suggest(f, sl("If the file is produced by an earlier step, run that step first."), none, none);
		return 1;
	}
	return 0;
}

/* R: "Error: unexpected symbol in ..."; Julia: "ERROR: LoadError: syntax:
 * ..." or (1.10+) "ParseError:". */
static int syntax(const input *in, slice text, failure *f)
{
	/* skip: the prefix ("Error: ") left out of the message */
	static const struct {
		const char *needle, *language;
		size_t skip;
	} forms[] = {
		{"Error: unexpected ", "R", 7},
		{"LoadError: syntax: ", "Julia", 11},
		{"ERROR: syntax: ", "Julia", 7},
		{"LoadError: ParseError:", "Julia", 11},
		{"ERROR: ParseError:", "Julia", 7},
	};
	(void)in;
	for (size_t j = 0; j < sizeof forms / sizeof forms[0]; j++) {
		const char *at = find_last(text, forms[j].needle);
		if (!at)
			continue;
		found(f, "SYNTAX_ERROR", "0.9", text, at);
		detail(f, "language", sl(forms[j].language));
		slice l = line_at(text, at);
		const char *from = at + forms[j].skip;
		say(f, sl(forms[j].language), sl(" could not parse the script: "), clip(rest(l, from), 200));
		suggest(f, sl("Fix the code at the position the error names; the script did not start."), none, none);
		return 1;
	}
	return 0;
}

/* Most specific first, as DESIGN §4 orders the codes. */
static const rule rules[] = {r_memory, julia_memory, r_package, julia_package, missing_file, syntax};

static void put_slice(buf *out, slice s) { buf_str(out, s.p, s.n); }

static void write_failure(const failure *f, buf *out)
{
	buf_puts(out, "{\"result\":{\"code\":\"");
	buf_puts(out, f->code);
	buf_puts(out, "\",\"message\":");
	buf_str(out, f->message.p, f->message.len);
	buf_puts(out, ",\"suggestions\":[");
	for (int j = 0; j < f->nsugg; j++) {
		if (j)
			buf_puts(out, ",");
		buf_str(out, f->sugg[j].p, f->sugg[j].len);
	}
	buf_puts(out, f->retryable ? "],\"retryable\":true" : "],\"retryable\":false");
	buf_puts(out, ",\"evidence\":[");
	put_slice(out, f->evidence);
	buf_puts(out, "],\"confidence\":");
	buf_puts(out, f->confidence);
	buf_puts(out, ",\"details\":{");
	for (int j = 0; j < f->ndetails; j++) {
		if (j)
			buf_puts(out, ",");
		buf_str(out, f->dkey[j], strlen(f->dkey[j]));
		buf_puts(out, ":");
		put_slice(out, f->dval[j]);
	}
	buf_puts(out, "}}}");
}

/* window returns the end of a stream's tail that the rules search: as
 * much as runbox sends (the runner and analyze keep the last 64 KiB of a
 * run), so that a larger input costs only its decoding. The error that
 * stopped a script is at its end. */
static slice window(buf b)
{
	if (b.len <= SEARCH_WINDOW)
		return (slice){b.p, b.len};
	return (slice){b.p + b.len - SEARCH_WINDOW, SEARCH_WINDOW};
}

void classify(const input *in, buf *out)
{
	/* Static so its buffers are reused call after call. */
	static failure f;
	slice texts[2] = {window(in->stderr_tail), window(in->stdout_tail)};
	for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
		for (int t = 0; t < 2; t++) {
			if (!texts[t].n)
				continue;
			buf_reset(&f.message);
			for (int j = 0; j < MAX_SUGG; j++)
				buf_reset(&f.sugg[j]);
			f.nsugg = f.ndetails = 0;
			f.retryable = 0;
			if (rules[r](in, texts[t], &f)) {
				write_failure(&f, out);
				return;
			}
		}
	}
	buf_puts(out, "{\"result\":null}");
}
