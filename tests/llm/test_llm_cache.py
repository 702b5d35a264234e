"""The SQLite response cache: content addressing, persistence, threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from lsrep.llm.cache import ResponseCache, request_key


def test_key_is_content_addressed():
    a = request_key({"model": "m", "messages": [{"role": "user", "content": "x"}], "seed": 1})
    b = request_key({"seed": 1, "messages": [{"content": "x", "role": "user"}], "model": "m"})
    c = request_key({"model": "m", "messages": [{"role": "user", "content": "x"}], "seed": 2})
    assert a == b != c and len(a) == 64


def test_put_get_and_persist(tmp_path):
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k1", kind="chat", base_url="u", model="m", request={"q": 1},
                  response={"text": "t"}, usage={"prompt_tokens": 3})
        cache.put("k1", kind="chat", base_url="u", model="m", request={"q": 1},
                  response={"text": "other"}, usage={})  # first writer wins
    with ResponseCache(path) as cache:
        hit = cache.get("k1")
        assert hit is not None and hit.response == {"text": "t"}
        assert hit.usage == {"prompt_tokens": 3}
        assert cache.get("missing") is None and cache.count() == 1


def test_threads_share_one_cache(tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        def work(i: int) -> bool:
            key = f"k{i % 20}"
            cache.put(key, kind="chat", base_url="u", model="m", request={"i": i % 20},
                      response={"text": key}, usage={})
            hit = cache.get(key)
            return hit is not None and hit.response["text"] == key

        with ThreadPoolExecutor(max_workers=8) as pool:
            assert all(pool.map(work, range(200)))
        assert cache.count() == 20
        assert len(cache.get_many([f"k{i}" for i in range(30)])) == 20
