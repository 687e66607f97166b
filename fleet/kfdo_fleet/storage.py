"""Files and file systems: local paths and object stores through pyarrow.fs, so an
s3:// prefix is listed and read like a directory; the S3 settings both readers (pyarrow's
and Spark's S3A) get from the AWS variables; the atomic write of the merged file."""
from __future__ import annotations

import os
import re
import uuid
from typing import Optional

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from .contract import MergeError

S3_SCHEMES = ("s3://", "s3a://", "s3n://")
# pyarrow's S3 errors carry the SDK's error name: the store could not be reached, or it
# refused the credentials. Neither says anything about the file, so --skip-bad never
# drops a file for them (an expired token would otherwise drop every file after it).
S3_UNREACHABLE = re.compile(r"NETWORK_CONNECTION|curlCode|Couldn't (connect|resolve)")
S3_REFUSED = re.compile(r"ACCESS_DENIED|SIGNATURE_DOES_NOT_MATCH|INVALID_ACCESS_KEY_ID|"
                        r"EXPIRED_TOKEN|INVALID_CLIENT_TOKEN_ID|UNRECOGNIZED_CLIENT|"
                        r"MISSING_AUTHENTICATION_TOKEN|INVALID_TOKEN|No credentials|"
                        r"AWS Error [A-Z_]*FORBIDDEN")
S3A_STORE_ERROR = re.compile(r"AWSClientIOException|AccessDeniedException|SdkClientException|"
                             r"Unable to execute HTTP request|AWSBadRequestException|"
                             r"AWSServiceIOException|NoAuthWithAWSException|"
                             r"UnknownHostException|ConnectException|AWSRedirectException")


def is_s3(uri: str) -> bool:
    return uri.startswith(S3_SCHEMES)


def s3_settings(url: str, env=os.environ) -> dict:
    """The S3 settings both readers use, from the usual AWS variables; `url` (the first
    s3 input or output) is named in errors. A plain dict of strings: it travels to the
    executors inside the footer pass's closure, as spark.hadoop.* travels in the conf, so
    executors need no variables of their own."""
    endpoint = (env.get("AWS_ENDPOINT_URL") or "").strip().rstrip("/")
    scheme = host = ""
    if endpoint:
        from urllib.parse import urlsplit
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path \
                or parts.query or parts.fragment:
            raise MergeError(f"AWS_ENDPOINT_URL={endpoint!r}: expected http://HOST[:PORT] or "
                             "https://HOST[:PORT], the S3 endpoint")
        scheme, host = parts.scheme, parts.netloc
    key = env.get("AWS_ACCESS_KEY_ID") or ""
    secret = env.get("AWS_SECRET_ACCESS_KEY") or ""
    token = env.get("AWS_SESSION_TOKEN") or ""
    if bool(key) != bool(secret):
        have, lack = (("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if key else
                      ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID"))
        raise MergeError(f"{url}: {have} is set but {lack} is not: set both (and "
                         "AWS_SESSION_TOKEN for temporary credentials)")
    if not key and endpoint:
        # Without keys each reader would fall back to its default chain, whose other
        # sources (instance roles) exist on AWS only, not at a store of one's own.
        raise MergeError(f"{url}: no credentials for the S3 endpoint {endpoint} "
                         "(AWS_ENDPOINT_URL): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                         "(and AWS_SESSION_TOKEN for temporary credentials)")
    if token and not key:
        raise MergeError(f"{url}: AWS_SESSION_TOKEN is set without AWS_ACCESS_KEY_ID and "
                         "AWS_SECRET_ACCESS_KEY: set all three")
    # A store of one's own takes any region for signing; us-east-1 is the usual one. On
    # AWS without a region, the bucket's own is looked up (as pyarrow's from_uri does).
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or \
        ("us-east-1" if endpoint else "")
    return {"endpoint": endpoint, "scheme": scheme, "host": host, "access_key": key,
            "secret_key": secret, "session_token": token, "region": region}


def s3a_conf(s3: dict) -> dict[str, str]:
    """The same settings for Hadoop's S3A connector, which Spark's data pass reads with."""
    conf: dict[str, str] = {}
    if s3["endpoint"]:
        # Stores of one's own serve buckets as paths, not as host names.
        conf["fs.s3a.endpoint"] = s3["endpoint"]
        conf["fs.s3a.path.style.access"] = "true"
        conf["fs.s3a.connection.ssl.enabled"] = str(s3["scheme"] == "https").lower()
    if s3["region"]:
        conf["fs.s3a.endpoint.region"] = s3["region"]
    if s3["access_key"]:
        conf["fs.s3a.access.key"] = s3["access_key"]
        conf["fs.s3a.secret.key"] = s3["secret_key"]
        if s3["session_token"]:
            conf["fs.s3a.session.token"] = s3["session_token"]
            conf["fs.s3a.aws.credentials.provider"] = \
                "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
        else:
            conf["fs.s3a.aws.credentials.provider"] = \
                "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
    return {f"spark.hadoop.{k}": v for k, v in conf.items()}


_S3_FILESYSTEMS: dict[tuple, pafs.FileSystem] = {}


def s3_filesystem(s3: dict, bucket: str) -> pafs.FileSystem:
    """pyarrow's S3 file system for these settings, one per process (per bucket only
    where the region must be looked up): the footer pass opens every file."""
    region = s3["region"]
    cache_key = (tuple(sorted(s3.items())), "" if region else bucket)
    fs = _S3_FILESYSTEMS.get(cache_key)
    if fs is None:
        if not region:
            region = pafs.resolve_s3_region(bucket)
        kwargs: dict = {"region": region}
        if s3["host"]:
            # With endpoint_override pyarrow addresses buckets as paths.
            kwargs.update(endpoint_override=s3["host"], scheme=s3["scheme"])
        if s3["access_key"]:
            kwargs.update(access_key=s3["access_key"], secret_key=s3["secret_key"],
                          session_token=s3["session_token"] or None)
        fs = _S3_FILESYSTEMS[cache_key] = pafs.S3FileSystem(**kwargs)
    return fs


def s3_problem(e: BaseException, s3: Optional[dict]) -> Optional[str]:
    """What an S3 error says about the store (unreachable, credentials refused), on one
    line, naming the endpoint and the variables; None for any other error."""
    if s3 is None:
        return None
    text = " ".join(str(e).split())
    where = (f"the S3 endpoint {s3['endpoint']} (AWS_ENDPOINT_URL)" if s3["endpoint"]
             else "AWS S3 (AWS_ENDPOINT_URL is not set)")
    if S3_UNREACHABLE.search(text):
        return f"cannot reach {where}: {text}"
    if S3_REFUSED.search(text):
        if s3["access_key"]:
            creds = (f"AWS_ACCESS_KEY_ID={s3['access_key']} with AWS_SECRET_ACCESS_KEY"
                     + (" and AWS_SESSION_TOKEN" if s3["session_token"] else ""))
        else:
            creds = ("the default AWS credential chain, as AWS_ACCESS_KEY_ID and "
                     "AWS_SECRET_ACCESS_KEY are not set")
        return f"{where} refused the credentials ({creds}): {text}"
    return None


def open_fs(uri: str, s3: Optional[dict] = None) -> tuple[pafs.FileSystem, str]:
    """The file system and path of a local path or URI (s3a:// is read as s3://, with
    `s3`'s settings; made from the environment when not given)."""
    if "://" not in uri:
        return pafs.LocalFileSystem(), os.path.abspath(uri)
    if is_s3(uri):
        # pyarrow's object-store paths start with the bucket.
        path = uri.split("://", 1)[1].rstrip("/")
        return s3_filesystem(s3 if s3 is not None else s3_settings(uri),
                             path.split("/", 1)[0]), path
    return pafs.FileSystem.from_uri(uri)


def to_uri(fs: pafs.FileSystem, path: str, original: str) -> str:
    """A name for a listed file that an executor can open again with open_fs."""
    if isinstance(fs, pafs.LocalFileSystem):
        return path
    scheme, rest = original.split("://", 1)
    if scheme in ("s3", "s3a", "s3n", "gs", "gcs"):
        # pyarrow's object-store paths start with the bucket.
        return f"{'s3' if scheme.startswith('s3') else scheme}://{path}"
    # hdfs://namenode:port/path: pyarrow's path is /path, the authority is the URI's.
    authority = rest.split("/", 1)[0]
    return f"{scheme}://{authority}/{path.lstrip('/')}"


def spark_path(path: str) -> str:
    """How Spark's own reader names a listed file (its `_metadata.file_path`): local files
    as file: URIs, object stores through Hadoop's s3a connector."""
    if "://" not in path:
        return "file:" + path
    if path.startswith("s3://"):
        return "s3a://" + path[len("s3://"):]
    return path


def list_inputs(inputs: list[str], s3: Optional[dict]) -> list[str]:
    """Every input file: files as given, directories (and object-store prefixes) expanded
    to their *.parquet (recursively, sorted by path). A missing input, an empty directory,
    or a store that cannot be listed is an error."""
    files: list[str] = []
    for item in inputs:
        try:
            fs, path = open_fs(item, s3)
            info = fs.get_file_info(path)
            if info.type == pafs.FileType.File:
                files.append(to_uri(fs, path, item))
                continue
            # Object stores have no directories: a prefix is listed as one.
            if info.type != pafs.FileType.Directory and "://" not in item:
                raise MergeError(f"{item}: no such file or directory")
            listed = fs.get_file_info(pafs.FileSelector(path.rstrip("/"), recursive=True))
        except FileNotFoundError:
            raise MergeError(f"{item}: no such file, directory or prefix") from None
        except OSError as e:
            problem = s3_problem(e, s3) if is_s3(item) else None
            raise MergeError(f"{item}: {problem or f'cannot list: {e}'}") from None
        found = sorted(i.path for i in listed
                       if i.type == pafs.FileType.File and i.path.endswith(".parquet"))
        if not found:
            raise MergeError(f"{item}: no *.parquet files in it")
        files.extend(to_uri(fs, f, item) for f in found)
    return files


def output_inside_input(output: str, inputs: list[str]) -> Optional[str]:
    """The input directory or prefix the output would land in, if any: a later merge of
    that directory would read the merged file as one more host's (kfdo merge-raw refuses
    the same)."""
    def norm(p: str) -> str:
        if is_s3(p):
            # One store, three names.
            p = "s3://" + p.split("://", 1)[1]
        return (p if "://" in p else os.path.realpath(p)).rstrip("/")
    out = norm(output)
    for item in inputs:
        if "://" not in item and not os.path.isdir(item):
            continue
        base = norm(item)
        if out.startswith(base + "/"):
            return item
    return None


def check_output_bucket(output: str, s3: dict) -> None:
    """An s3 output's bucket exists and the credentials reach it: found before the job,
    not after it."""
    try:
        fs, path = open_fs(output, s3)
        bucket = path.split("/", 1)[0]
        if "/" not in path:
            raise MergeError(f"-o {output}: an object needs a key inside the bucket")
        found = fs.get_file_info(bucket).type == pafs.FileType.Directory
    except OSError as e:
        raise MergeError(f"-o {output}: {s3_problem(e, s3) or e}") from None
    if not found:
        raise MergeError(f"-o {output}: no bucket {bucket!r} at "
                         f"{s3['endpoint'] or 'AWS S3'}")


def write_atomically(table: pa.Table, output: str, s3: Optional[dict]) -> None:
    """Write to a temporary name beside the output, then rename: never a partial file.
    (On object stores the upload goes to a temporary key, copied to the output's key
    once complete: a failed upload leaves no object under the output's name.)"""
    fs, path = open_fs(output, s3)
    parent, name = os.path.split(path)
    if isinstance(fs, pafs.LocalFileSystem):
        os.makedirs(parent or ".", exist_ok=True)
    tmp = f"{parent}/.{name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        pq.write_table(table, tmp, filesystem=fs)
        fs.move(tmp, path)
    except BaseException:
        try:
            fs.delete_file(tmp)
        except OSError:
            pass
        raise
