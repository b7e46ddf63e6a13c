/* The MLLOG line scan in C: gpuscale.mlperf.mllog's hot loop, optional.
 *
 * payloads(data) -> (count, joined) finds every line holding ":::MLLOG ", keeps the
 * text after the *last* token on that line and returns how many such lines there are
 * and their texts joined by "\n". Line ends are "\n", "\r\n" and "\r" (Python's
 * universal newlines, as the official parser reads files), so no payload holds one.
 * Exactly what the pure-Python path in mllog.py computes with re.findall (a property
 * test compares the two on arbitrary bytes); this one runs memmem/memchr at memory
 * speed instead of the regex engine and releases the GIL while it scans.
 */
#define PY_SSIZE_T_CLEAN
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <Python.h>
#include <stdlib.h>
#include <string.h>

static const char TOKEN[] = ":::MLLOG ";
#define TOKEN_LEN (sizeof(TOKEN) - 1)

#if defined(__GLIBC__) || defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__) || defined(__linux__)
#define find_token(p, n) ((const char *)memmem((p), (n), TOKEN, TOKEN_LEN))
#else
/* Portable fallback: memchr for the first byte, then compare the rest. */
static const char *find_token(const char *p, size_t n)
{
    const char *end = p + n;
    while (n >= TOKEN_LEN) {
        const char *c = memchr(p, TOKEN[0], n - TOKEN_LEN + 1);
        if (c == NULL)
            return NULL;
        if (memcmp(c, TOKEN, TOKEN_LEN) == 0)
            return c;
        p = c + 1;
        n = (size_t)(end - p);
    }
    return NULL;
}
#endif

/* End of the line that starts at or before p: the first '\n' or '\r' in [p, end). */
static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl ? nl : end;
    const char *cr = memchr(p, '\r', (size_t)(stop - p));
    return cr ? cr : stop;
}

/* Scan [data, data + n) into out (at least n bytes); returns the joined length. */
static Py_ssize_t scan(const char *data, size_t n, char *out, Py_ssize_t *count)
{
    const char *p = data, *end = data + n;
    char *o = out;
    Py_ssize_t lines = 0;
    const char *t;
    while ((t = find_token(p, (size_t)(end - p))) != NULL) {
        const char *start = t + TOKEN_LEN;
        const char *stop = line_end(start, end);
        /* A second token on the line: the official parser keeps what follows the last. */
        const char *again;
        while ((again = find_token(start, (size_t)(stop - start))) != NULL)
            start = again + TOKEN_LEN;
        if (lines > 0)
            *o++ = '\n';
        memcpy(o, start, (size_t)(stop - start));
        o += stop - start;
        lines++;
        p = stop;
    }
    *count = lines;
    return (Py_ssize_t)(o - out);
}

static PyObject *payloads(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    /* The joined text is never longer than the input: each payload is followed in the
     * input by at least one byte it does not carry over (its line end or the token of
     * the next), and that byte pays for the "\n" written after it. */
    char *out = PyMem_RawMalloc(view.len > 0 ? (size_t)view.len : 1);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    Py_ssize_t count = 0, length;
    Py_BEGIN_ALLOW_THREADS
    length = scan((const char *)view.buf, (size_t)view.len, out, &count);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    PyObject *joined = PyBytes_FromStringAndSize(out, length);
    PyMem_RawFree(out);
    if (joined == NULL)
        return NULL;
    return Py_BuildValue("(nN)", count, joined);
}

static PyMethodDef methods[] = {
    {"payloads", payloads, METH_O,
     "payloads(data) -> (count, joined): the MLLOG lines' payloads, joined by newlines."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_scan",
    .m_doc = "MLLOG line scanning in C (optional).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__scan(void) { return PyModule_Create(&module); }
