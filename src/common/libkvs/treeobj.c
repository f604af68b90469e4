/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* treeobj.c - RFC 11 tree objects: construction, strict validation,
 * access, and the canonical encoding that is hashed into the content
 * store.  Validation fails closed: anything RFC 11 does not define, or
 * that we chose to forbid (see treeobj.h), is EINVAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/blobref.h"
#include "libflux/base64.h"
#include "libflux/jsonparse.h"
#include "libutil/fnv.h"

#include "treeobj.h"

static const char *const types[] = {
    "val", "valref", "dir", "dirref", "symlink", "hdir", NULL,
};

static int einval (void)
{
    errno = EINVAL;
    return -1;
}

static const char *known_type (const char *s)
{
    for (int i = 0; types[i]; i++) {
        if (!strcmp (types[i], s))
            return types[i];
    }
    return NULL;
}

const char *treeobj_get_type (const json_t *obj)
{
    json_t *o;
    const char *t;

    if (!json_is_object (obj) || !(o = json_object_get (obj, "type"))
        || !json_is_string (o) || !(t = known_type (json_string_value (o)))) {
        errno = EINVAL;
        return NULL;
    }
    return t;
}

static bool has_type (const json_t *obj, const char *type)
{
    json_t *o;

    return json_is_object (obj) && (o = json_object_get (obj, "type"))
           && json_is_string (o) && !strcmp (json_string_value (o), type);
}

bool treeobj_is_val (const json_t *obj)
{
    return has_type (obj, "val");
}

bool treeobj_is_valref (const json_t *obj)
{
    return has_type (obj, "valref");
}

bool treeobj_is_dir (const json_t *obj)
{
    return has_type (obj, "dir");
}

bool treeobj_is_dirref (const json_t *obj)
{
    return has_type (obj, "dirref");
}

bool treeobj_is_symlink (const json_t *obj)
{
    return has_type (obj, "symlink");
}

bool treeobj_is_hdir (const json_t *obj)
{
    return has_type (obj, "hdir");
}

json_t *treeobj_get_data (const json_t *obj)
{
    json_t *data;

    if (!treeobj_get_type (obj) || !(data = json_object_get (obj, "data"))) {
        errno = EINVAL;
        return NULL;
    }
    return data;
}

/* A dir entry name: non-empty, no '.' (the key separator). */
static bool valid_name (const char *name)
{
    return name && name[0] != '\0' && !strchr (name, '.');
}

static int validate_refs (const json_t *data, size_t min, size_t max)
{
    size_t i;
    json_t *o;

    if (!json_is_array (data) || json_array_size (data) < min
        || json_array_size (data) > max)
        return einval ();
    json_array_foreach (data, i, o)
    {
        if (!json_is_string (o) || blobref_validate (json_string_value (o)) < 0)
            return einval ();
    }
    return 0;
}

static int validate_symlink (const json_t *data)
{
    const char *key;
    json_t *o;
    int ntarget = 0;

    if (!json_is_object (data))
        return einval ();
    json_object_foreach ((json_t *)data, key, o)
    {
        if (!json_is_string (o) || json_string_length (o) == 0)
            return einval ();
        if (!strcmp (key, "target"))
            ntarget++;
        else if (strcmp (key, "namespace") != 0)
            return einval ();
    }
    return ntarget == 1 ? 0 : einval ();
}

static int validate_dir (const json_t *data)
{
    const char *name;
    json_t *o;

    if (!json_is_object (data))
        return einval ();
    json_object_foreach ((json_t *)data, name, o)
    {
        if (!valid_name (name) || treeobj_is_hdir (o)
            || treeobj_validate (o) < 0)
            return einval ();
    }
    return 0;
}

#define HDIR_FUNC "fnv1a32"

/* {"size":n, "func":f, "bucket":[n x (null or dirref)]}; with
 * any_bucket, slots may hold any tree object (a writer's hdir). */
static int validate_hdir (const json_t *data, bool any_bucket)
{
    json_t *size, *func, *bucket, *o;
    size_t i;

    if (!json_is_object (data) || json_object_size (data) != 3
        || !(size = json_object_get (data, "size")) || !json_is_integer (size)
        || json_integer_value (size) < 1
        || json_integer_value (size) > TREEOBJ_HDIR_MAX_SIZE
        || !(func = json_object_get (data, "func")) || !json_is_string (func)
        || strcmp (json_string_value (func), HDIR_FUNC) != 0
        || !(bucket = json_object_get (data, "bucket"))
        || !json_is_array (bucket)
        || json_array_size (bucket) != (size_t)json_integer_value (size))
        return einval ();
    if (any_bucket)
        return 0;
    json_array_foreach (bucket, i, o)
    {
        if (!json_is_null (o)
            && (!treeobj_is_dirref (o) || treeobj_validate (o) < 0))
            return einval ();
    }
    return 0;
}

int treeobj_validate (const json_t *obj)
{
    const char *type;
    json_t *ver, *data;

    if (!(type = treeobj_get_type (obj)) || json_object_size (obj) != 3
        || !(ver = json_object_get (obj, "ver")) || !json_is_integer (ver)
        || json_integer_value (ver) != 1
        || !(data = json_object_get (obj, "data")))
        return einval ();
    if (!strcmp (type, "val")) {
        if (!json_is_string (data)
            || !base64_valid (json_string_value (data),
                              json_string_length (data)))
            return einval ();
        return 0;
    }
    if (!strcmp (type, "valref"))
        return validate_refs (data, 1, (size_t)-1);
    if (!strcmp (type, "dirref"))
        return validate_refs (data, 1, 1);
    if (!strcmp (type, "dir"))
        return validate_dir (data);
    if (!strcmp (type, "hdir"))
        return validate_hdir (data, false);
    return validate_symlink (data);
}

/* {"ver":1, "type":type, "data":data}, stealing data. */
static json_t *create (const char *type, json_t *data)
{
    json_t *obj;

    if (!data) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(obj = json_object ())
        || json_object_set_new (obj, "ver", json_integer (1)) < 0
        || json_object_set_new (obj, "type", json_string (type)) < 0
        || json_object_set_new (obj, "data", data) < 0) {
        json_decref (obj);
        errno = ENOMEM;
        return NULL;
    }
    return obj;
}

json_t *treeobj_create_val (const void *data, size_t len)
{
    size_t size = base64_encoded_size (len);
    json_t *obj;
    char *s;
    ssize_t n;

    if (!data && len > 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = malloc (size)))
        return NULL;
    if ((n = base64_encode (s, size, data ? data : "", len)) < 0) {
        free (s);
        return NULL;
    }
    /* base64 is ASCII: no UTF-8 check needed */
    obj = create ("val", json_stringn_nocheck (s, n));
    free (s);
    return obj;
}

static json_t *create_ref (const char *type, const char *blobref)
{
    json_t *obj;

    if (blobref && blobref_validate (blobref) < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(obj = create (type, json_array ())))
        return NULL;
    if (blobref && treeobj_append_blobref (obj, blobref) < 0) {
        json_decref (obj);
        return NULL;
    }
    return obj;
}

json_t *treeobj_create_valref (const char *blobref)
{
    return create_ref ("valref", blobref);
}

json_t *treeobj_create_dirref (const char *blobref)
{
    return create_ref ("dirref", blobref);
}

json_t *treeobj_create_dir (void)
{
    return create ("dir", json_object ());
}

json_t *treeobj_create_hdir (int size, const char *func)
{
    json_t *bucket;

    if (size < 1 || size > TREEOBJ_HDIR_MAX_SIZE
        || (func && strcmp (func, HDIR_FUNC) != 0)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(bucket = json_array ()))
        goto nomem;
    for (int i = 0; i < size; i++) {
        if (json_array_append_new (bucket, json_null ()) < 0) {
            json_decref (bucket);
            goto nomem;
        }
    }
    return create ("hdir", json_pack ("{s:i s:s s:o}", "size", size, "func",
                                      HDIR_FUNC, "bucket", bucket));
nomem:
    errno = ENOMEM;
    return NULL;
}

json_t *treeobj_create_symlink (const char *ns, const char *target)
{
    json_t *data;

    if (!target || !*target || (ns && !*ns)) {
        errno = EINVAL;
        return NULL;
    }
    if (ns)
        data = json_pack ("{s:s s:s}", "target", target, "namespace", ns);
    else
        data = json_pack ("{s:s}", "target", target);
    return create ("symlink", data);
}

int treeobj_decode_val (const json_t *obj, void **data, size_t *len)
{
    const char *s;
    size_t slen, size;
    ssize_t n;
    char *buf;
    json_t *o;

    if (!treeobj_is_val (obj) || !(o = json_object_get (obj, "data"))
        || !json_is_string (o) || !data || !len)
        return einval ();
    s = json_string_value (o);
    slen = json_string_length (o);
    size = base64_decoded_size (slen) + 1;
    if (!(buf = malloc (size)))
        return -1;
    if ((n = base64_decode (buf, size, s, slen)) < 0) {
        free (buf);
        return einval ();
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

int treeobj_get_count (const json_t *obj)
{
    const char *type;
    json_t *data;

    if (!(type = treeobj_get_type (obj)) || !(data = treeobj_get_data (obj)))
        return einval ();
    if (!strcmp (type, "val") || !strcmp (type, "symlink"))
        return 1;
    if (!strcmp (type, "dir")) {
        if (!json_is_object (data))
            return einval ();
        return json_object_size (data);
    }
    if (!json_is_array (data))
        return einval ();
    return json_array_size (data);
}

static json_t *ref_array (const json_t *obj)
{
    json_t *data;

    if ((!treeobj_is_valref (obj) && !treeobj_is_dirref (obj))
        || !(data = json_object_get (obj, "data")) || !json_is_array (data)) {
        errno = EINVAL;
        return NULL;
    }
    return data;
}

const char *treeobj_get_blobref (const json_t *obj, int index)
{
    json_t *data, *o;

    if (!(data = ref_array (obj)))
        return NULL;
    if (index < 0 || !(o = json_array_get (data, index))
        || !json_is_string (o)) {
        errno = EINVAL;
        return NULL;
    }
    return json_string_value (o);
}

int treeobj_append_blobref (json_t *obj, const char *blobref)
{
    json_t *data, *s;

    if (!(data = ref_array (obj)) || !blobref || blobref_validate (blobref) < 0)
        return einval ();
    if (!(s = json_string (blobref)) || json_array_append_new (data, s) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

uint32_t treeobj_fnv1a32 (const void *data, size_t len)
{
    return fnv1a32 (data, len);
}

/* The bucket array of a (writer's) hdir, or NULL with EINVAL. */
static json_t *hdir_buckets (const json_t *obj)
{
    json_t *data;

    if (!treeobj_is_hdir (obj) || !(data = json_object_get (obj, "data"))
        || validate_hdir (data, true) < 0) {
        errno = EINVAL;
        return NULL;
    }
    return json_object_get (data, "bucket");
}

json_t *treeobj_hdir_get_buckets (const json_t *obj)
{
    return hdir_buckets (obj);
}

int treeobj_hdir_size (const json_t *obj)
{
    json_t *b = hdir_buckets (obj);
    return b ? (int)json_array_size (b) : -1;
}

int treeobj_hdir_index (const json_t *obj, const char *name)
{
    json_t *b = hdir_buckets (obj);

    if (!b || !valid_name (name))
        return einval ();
    return treeobj_fnv1a32 (name, strlen (name)) % json_array_size (b);
}

json_t *treeobj_hdir_get_bucket (const json_t *obj, int index)
{
    json_t *b = hdir_buckets (obj), *o;

    if (!b || index < 0 || (size_t)index >= json_array_size (b)) {
        errno = EINVAL;
        return NULL;
    }
    o = json_array_get (b, index);
    if (json_is_null (o)) {
        errno = ENOENT;
        return NULL;
    }
    return o;
}

int treeobj_hdir_set_bucket (json_t *obj, int index, json_t *obj2)
{
    json_t *b = hdir_buckets (obj);

    if (!b || index < 0 || (size_t)index >= json_array_size (b)
        || (obj2 && !treeobj_get_type (obj2)))
        return einval ();
    if (json_array_set (b, index, obj2 ? obj2 : json_null ()) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

static json_t *dir_data (const json_t *obj, const char *name)
{
    json_t *data;

    if (!treeobj_is_dir (obj) || !(data = json_object_get (obj, "data"))
        || !json_is_object (data) || !valid_name (name)) {
        errno = EINVAL;
        return NULL;
    }
    return data;
}

json_t *treeobj_get_entry (const json_t *obj, const char *name)
{
    json_t *data, *o;

    if (!(data = dir_data (obj, name)))
        return NULL;
    if (!(o = json_object_get (data, name))) {
        errno = ENOENT;
        return NULL;
    }
    return o;
}

int treeobj_insert_entry (json_t *obj, const char *name, json_t *obj2)
{
    json_t *data;

    if (!(data = dir_data (obj, name)) || !treeobj_get_type (obj2))
        return einval ();
    if (json_object_set (data, name, obj2) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int treeobj_delete_entry (json_t *obj, const char *name)
{
    json_t *data;

    if (!(data = dir_data (obj, name)))
        return -1;
    if (json_object_del (data, name) < 0) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

int treeobj_get_symlink (const json_t *obj, const char **ns,
                         const char **target)
{
    json_t *data, *o;

    if (!treeobj_is_symlink (obj) || !(data = json_object_get (obj, "data"))
        || validate_symlink (data) < 0)
        return einval ();
    if (target)
        *target = json_string_value (json_object_get (data, "target"));
    if (ns) {
        o = json_object_get (data, "namespace");
        *ns = o ? json_string_value (o) : NULL;
    }
    return 0;
}

json_t *treeobj_copy (const json_t *obj)
{
    const char *type;
    json_t *data, *cpy;

    if (!(type = treeobj_get_type (obj)) || !(data = treeobj_get_data (obj)))
        return NULL;
    if (!(cpy = json_copy (data))) {
        errno = ENOMEM;
        return NULL;
    }
    if (!strcmp (type, "hdir")) {
        json_t *b = json_object_get (cpy, "bucket");
        if (json_is_array (b)
            && json_object_set_new (cpy, "bucket", json_copy (b)) < 0) {
            json_decref (cpy);
            errno = ENOMEM;
            return NULL;
        }
    }
    return create (type, cpy);
}

json_t *treeobj_deep_copy (const json_t *obj)
{
    json_t *cpy;

    if (!treeobj_get_type (obj)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cpy = json_deep_copy (obj))) {
        errno = ENOMEM;
        return NULL;
    }
    return cpy;
}

static json_t *decode_checked (json_t *obj)
{
    if (!obj || treeobj_validate (obj) < 0) {
        json_decref (obj);
        errno = EINVAL;
        return NULL;
    }
    return obj;
}

json_t *treeobj_decode (const char *buf)
{
    if (!buf) {
        errno = EINVAL;
        return NULL;
    }
    return decode_checked (json_loads (buf, JSON_REJECT_DUPLICATES, NULL));
}

json_t *treeobj_decodeb (const char *buf, size_t size)
{
    if (!buf) {
        errno = EINVAL;
        return NULL;
    }
    /* jsonparse: json_loadb's result, faster (dirs are decoded on
     * every cache miss of a lookup) */
    return decode_checked (
        jsonparse_ex (buf, size, JSON_REJECT_DUPLICATES, NULL, 0));
}

char *treeobj_encode (const json_t *obj)
{
    char *s;

    if (!treeobj_get_type (obj)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = json_dumps (obj, JSON_COMPACT | JSON_SORT_KEYS))) {
        errno = ENOMEM;
        return NULL;
    }
    return s;
}

int treeobj_hash (const char *hashtype, const json_t *obj, char *blobref,
                  size_t size)
{
    char *s;
    int rc;

    if (!hashtype || !blobref || !(s = treeobj_encode (obj)))
        return einval ();
    rc = blobref_hash (hashtype, s, strlen (s), blobref, size);
    free (s);
    if (rc < 0)
        return einval ();
    return 0;
}
