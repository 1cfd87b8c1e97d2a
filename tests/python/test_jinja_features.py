"""pagoda's Jinja engine agrees with Python's jinja2 on the language features templates use.

Each snippet renders through `pagoda template` (a tokenizer_config.json holding the snippet,
variables passed with --kwargs) and through jinja2 in transformers' chat environment (see
test_chat_templates.py); outputs must be byte-equal, and when jinja2 raises pagoda must fail.
"""
import json
import subprocess

import pytest

from test_chat_templates import reference_env

CONTEXT = {
    "s": "  Hello, World  ",
    "n": 7,
    "f": 2.5,
    "xs": [3, 1, 2],
    "words": ["b", "A", "c", "a"],
    "d": {"z": 1, "a": [1, 2], "m": {"k": "v"}},
    "people": [{"name": "Ann", "age": 31, "admin": True}, {"name": "bob", "age": 25, "admin": False},
               {"name": "Cy", "age": 31}],
    "u": "Grüße, 世界",
    "none_value": None,
    "flag": False,
}

SNIPPETS = [
    # literals and printing
    "{{ 1 }} {{ -2 }} {{ 1.0 }} {{ 1e3 }} {{ 0.1 + 0.2 }} {{ 1/3 }} {{ 10/2 }} {{ 2**0.5 }}",
    "{{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1_000 }} {{ 1e-7 }} {{ 123456789.0 * 1e10 }}",
    "{{ true }} {{ false }} {{ none }} {{ True }} {{ None }}",
    "{{ 'a\\tb\\\\c\\'d\\u00e9\\x41\\101' }}|{{ \"dq \\\" x\" }}|{{ 'adj' 'acent' }}",
    "{{ [1, 'a', none, true, 1.5] }} {{ (1,) }} {{ (1, 2) }} {{ () }} {{ {'a': 1, 'b': [2]} }}",
    "{{ \"it's\" }} {{ [\"it's\", 'say \"hi\"', 'both \\' \"'] }}",
    "{{ xs }} {{ d }} {{ none_value }} {{ undefined_thing }}|",
    # arithmetic
    "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }}",
    "{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 'ab' * 3 }} {{ [1] * 3 }} {{ 3 * 'x' }} {{ 'a' ~ 1 ~ none }}",
    "{{ 1 + 2 * 3 - 4 / 2 }} {{ (1 + 2) * 3 }} {{ -2 ** 2 }} {{ not 1 == 2 }} {{ 1 + True }}",
    "{{ 'a' + 1 }}",
    "{{ 1 / 0 }}",
    "{{ [1] + [2, 3] }} {{ (1,) + (2,) }}",
    # comparisons and logic
    "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 == 1.0 }} {{ 1 != '1' }}",
    "{{ 'ell' in s }} {{ 2 in xs }} {{ 'z' in d }} {{ 'q' not in d }} {{ 5 not in xs }}",
    "{{ 0 or 'x' }} {{ 1 and 'y' }} {{ '' and 1 }} {{ none or [] }} {{ not none }}",
    "{{ 'yes' if n > 5 else 'no' }} {{ 'a' if flag }}|{{ ('t' if xs else 'f') ~ '!' }}",
    "{{ 1 < 'a' }}",
    # attributes, subscripts, slices
    "{{ d.z }} {{ d['a'][1] }} {{ d.m.k }} {{ d['m']['k'] }} {{ xs[-1] }} {{ xs.0 }} {{ s[2] }} {{ u[-2] }}",
    "{{ xs[::-1] }} {{ xs[1:] }} {{ xs[:-1] }} {{ u[::-1] }} {{ s[2:7] }} {{ xs[::2] }} {{ xs[5:] }} {{ u[1:4] }}",
    "{{ d.missing }}|{{ xs[10] }}|{{ d.missing is defined }}",
    "{{ d.missing.deeper }}",
    "{{ d.items() | list }} {{ d.keys() | list }} {{ d.values() | list }} {{ d.get('z') }} {{ d.get('q', 5) }}",
    "{{ none_value.attr }}|{{ n.attr }}|",
    # string methods
    "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ 'xxhixx'.strip('x') }}|{{ s.upper() }}|{{ s.lower() }}",
    "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a-b-c'.rsplit('-', 1) }}",
    "{{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }} {{ 'aaa'.replace('a', 'b', 2) }} {{ 'ab'.replace('', '-') }}",
    "{{ s.startswith('  He') }} {{ s.endswith(('x', '  ')) }} {{ 'abcabc'.find('c') }} {{ 'abc'.rfind('z') }} {{ 'aXbXc'.count('X') }}",
    "{{ '-'.join(['a', 'b']) }} {{ '{} and {}'.format(1, 'two') }} {{ '{0}{1}{0}'.format('a', 'b') }} {{ '{x}!'.format(x=3) }}",
    "{{ '123'.isdigit() }} {{ 'ab'.isalpha() }} {{ ' '.isspace() }} {{ 'ab'.islower() }} {{ 'AB'.isupper() }} {{ 'l1\\nl2'.splitlines() }}",
    # filters
    "{{ s | trim }}|{{ s | length }}|{{ u | length }}|{{ xs | length }}|{{ d | count }}|{{ 'x..y' | trim('x.y') }}",
    "{{ xs | join(', ') }} {{ xs | first }} {{ xs | last }} {{ xs | sort }} {{ xs | sort(reverse=true) }} {{ words | sort }}",
    "{{ words | sort(case_sensitive=true) }} {{ words | unique | list }} {{ [3, 1, 3, 2, 1] | unique | list }}",
    "{{ people | map(attribute='name') | join('/') }} {{ people | selectattr('admin') | map(attribute='name') | list }}",
    "{{ people | rejectattr('admin') | map(attribute='name') | list }} {{ people | selectattr('age', 'equalto', 31) | list | length }}",
    "{{ people | sort(attribute='age') | map(attribute='name') | list }} {{ people | map(attribute='missing', default='?') | list }}",
    "{{ xs | select('odd') | list }} {{ xs | reject('odd') | list }} {{ xs | map('string') | list }} {{ words | map('upper') | join }}",
    "{{ s | upper }} {{ s | lower }} {{ 'hi there' | capitalize }} {{ 'hello big-world (x)' | title }} {{ s | replace('l', 'L') }}",
    "{{ d | items | list }} {{ d | dictsort }} {{ xs | list }} {{ 'abc' | list }} {{ d | list }} {{ xs | reverse | list }} {{ 'abc' | reverse }}",
    "{{ missing | default('dflt') }} {{ '' | default('e', true) }} {{ 0 | d(5) }} {{ none_value | default('x') }}",
    "{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(9) }} {{ 3.9 | int }} {{ '3.5' | float }} {{ 2 | float }} {{ '0x1A' | int(0, 16) }}",
    "{{ -3 | abs }} {{ 2.567 | round }} {{ 2.567 | round(2) }} {{ 2.5 | round }} {{ 7 | round }} {{ 2.1 | round(0, 'ceil') }} {{ 2.9 | round(1, 'floor') }}",
    "{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(width='>', blank=true) }}",
    "{{ n | string }} {{ xs | string }} {{ '<a&b>' | escape }} {{ '<x>' | safe }} {{ xs | sum }} {{ people | sum(attribute='age') }}",
    "{{ xs | min }} {{ xs | max }} {{ words | min }} {{ people | max(attribute='age') }} {{ [1, 2, 3, 4, 5] | batch(2) | list }}",
    "{{ d | tojson }} {{ people | tojson }} {{ u | tojson }} {{ 'q\"\\n\\t</' | tojson }} {{ [1.0, 1e20, none, true] | tojson }}",
    "{{ d | tojson(indent=2) }}|{{ [] | tojson(indent=2) }}|{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}|{{ d | tojson(separators=(',', ':')) }}",
    "{{ u | tojson(ensure_ascii=true) }} {{ '😀' | tojson(ensure_ascii=true) }}",
    "{{ xs | nosuchfilter }}",
    # tests
    "{{ n is defined }} {{ nope is defined }} {{ nope is undefined }} {{ none_value is none }} {{ s is string }} {{ n is number }}",
    "{{ d is mapping }} {{ xs is mapping }} {{ xs is iterable }} {{ s is iterable }} {{ n is iterable }} {{ xs is sequence }} {{ d is sequence }}",
    "{{ true is true }} {{ 1 is true }} {{ flag is false }} {{ n is odd }} {{ n is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }}",
    "{{ n is integer }} {{ f is float }} {{ true is boolean }} {{ 'ab' is lower }} {{ 'AB' is upper }} {{ n is eq 7 }} {{ n is ne 7 }}",
    "{{ n is gt 3 }} {{ n is lt 3 }} {{ n is ge 7 }} {{ 2 is in xs }} {{ range is callable }} {{ n is not none }} {{ xs is sameas xs }}",
    "{{ n is nosuchtest }}",
    # statements
    "{% if n > 10 %}big{% elif n > 5 %}mid{% else %}small{% endif %}",
    "{% for x in xs %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }};{% endfor %}",
    "{% for x in xs %}{{ loop.previtem }}<{{ x }}>{{ loop.nextitem }}|{{ loop.cycle('a', 'b') }};{% endfor %}",
    "{% for x in [] %}never{% else %}empty{% endfor %} {% for x in xs if x > 1 %}{{ x }}:{{ loop.length }} {% endfor %}",
    "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %} {% for a, b in [(1, 2), (3, 4)] %}{{ a + b }}{% endfor %}",
    "{% for x in xs %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}",
    "{% for row in [[1, 2], [3]] %}{% for c in row %}{{ loop.index }}{{ c }}{% endfor %}|{{ loop.index }}{% endfor %}",
    "{% for c in 'ab' %}{{ c }}{% endfor %} {% for k in d %}{{ k }}{% endfor %} {% for x in missing %}x{% endfor %}",
    "{% set a = 1 %}{% set b, c = 2, 3 %}{{ a + b + c }} {% set t = (1, 2) %}{{ t }}",
    "{% set x = 1 %}{% for i in xs %}{% set x = i %}{% endfor %}{{ x }} {% if true %}{% set y = 5 %}{% endif %}{{ y }}",
    "{% set ns = namespace(total=0, items=[]) %}{% for i in xs %}{% set ns.total = ns.total + i %}{% endfor %}{{ ns.total }}",
    "{% set block %}inner {{ n }}{% endset %}[{{ block }}] {% set up | upper %}shout{% endset %}{{ up }}",
    "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }} {{ greet('Bo', punct='?') }} {{ greet(name='Cy') }}",
    "{% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, k=3) }}",
    "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}body {{ n }}{% endcall %}",
    "{% macro row(x) %}[{{ caller(x * 2) }}]{% endmacro %}{% call(v) row(4) %}v={{ v }}{% endcall %}",
    "{% macro fact(k) %}{% if k <= 1 %}1{% else %}{{ k * (fact(k - 1) | int) }}{% endif %}{% endmacro %}{{ fact(6) }}",
    "{% filter upper %}shout {{ n }}{% endfilter %} {% filter replace('a', 'o') | title %}banana split{% endfilter %}",
    "{% raw %}{{ not rendered }}{% endraw %} {# a comment #}after",
    "{% with a = 3, b = 4 %}{{ a * b }}{% endwith %}{{ a }}|",
    "{% generation %}tracked {{ n }}{% endgeneration %}",
    # globals
    "{{ range(3) | list }} {{ range(1, 10, 3) | list }} {{ range(5, 0, -2) | list }} {{ dict(a=1, b=2) }} {{ namespace(x=1).x }}",
    "{{ raise_exception('custom failure') }}",
    "{{ range(1000000) | length }}",
    "{% set ns = namespace() %}{% set ns._hidden = 1 %}",
    "{{ xs.append(4) }}",
    # whitespace control under trim_blocks / lstrip_blocks
    "a\n  {% if true %}\n  b\n  {% endif %}\nc\n",
    "x  {%- if true -%}  y  {%- endif -%}  z",
    "  {{- n -}}  |  {{+ n }}  |  {%+ if true %}kept{% endif %}",
    "line1\n    {# comment #}\nline2\n{% for i in xs %}\n  - {{ i }}\n{% endfor %}\nend",
    "{% if true +%}\nkeep newline{% endif %}\n{%- raw -%}\n  raw  {%- endraw %}",
    # syntax errors
    "{% if %}",
    "{% for x in %}{% endfor %}",
    "{{ 'unterminated }}",
    "{% if true %}no end",
    "{{ (1, 2 }}",
    "{% endfor %}",
    "{{ x | }}",
]


@pytest.fixture(scope="module")
def env():
    return reference_env()


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_snippet_matches_jinja2(pagoda_bin, tmp_path, env, index):
    source = SNIPPETS[index]
    try:
        expected, error = env.from_string(source).render(messages=[], tools=None, documents=None,
                                                         add_generation_prompt=False, **CONTEXT), None
    except Exception as e:
        expected, error = None, e
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": source}), encoding="utf-8")
    messages = tmp_path / "messages.json"
    messages.write_text("[]")
    result = subprocess.run([pagoda_bin, "template", config, "--messages", messages,
                             "--kwargs", json.dumps(CONTEXT)], capture_output=True, timeout=30)
    if error is not None:
        assert result.returncode != 0, f"jinja2 raised {error!r}, pagoda printed {result.stdout!r}"
        assert b"unexpected error" not in result.stderr, result.stderr
    else:
        assert result.returncode == 0, result.stderr.decode()
        assert result.stdout.decode("utf-8") == expected
