import { describe, expect, it } from 'vitest';
import { expandEnvString } from './expandEnvString.ts';

describe('expandEnvString', () => {
  const env = { A: 'alpha', B_2: 'beta', EMPTY: '', DOLLAR: '${A}' };

  it('returns strings without ${ unchanged', () => {
    expect(expandEnvString('plain $A $ {A} $$', env)).toEqual({ ok: true, value: 'plain $A $ {A} $$', expanded: [] });
  });

  it('replaces every reference and lists the expanded values', () => {
    expect(expandEnvString('${A}/${B_2}/${A}', env)).toEqual({ ok: true, value: 'alpha/beta/alpha', expanded: ['alpha', 'beta', 'alpha'] });
  });

  it('does not expand a value a second time', () => {
    expect(expandEnvString('${DOLLAR}', env)).toEqual({ ok: true, value: '${A}', expanded: ['${A}'] });
  });

  it('turns $${ into a literal ${', () => {
    expect(expandEnvString('$${A} and ${A} and $$${A}', env)).toEqual({ ok: true, value: '${A} and alpha and $${A}', expanded: ['alpha'] });
  });

  it('counts an empty variable as set', () => {
    expect(expandEnvString('[${EMPTY}]', env)).toEqual({ ok: true, value: '[]', expanded: [''] });
  });

  it('lists each missing variable once', () => {
    expect(expandEnvString('${NOPE}${A}${NOPE}${ALSO_NOPE}', env)).toEqual({ ok: false, missing: ['NOPE', 'ALSO_NOPE'], syntax: [] });
  });

  it('does not read inherited properties of env', () => {
    expect(expandEnvString('${toString}', env)).toEqual({ ok: false, missing: ['toString'], syntax: [] });
  });

  it('describes malformed references', () => {
    expect(expandEnvString('${} ${9X} ${A B} ${OPEN', env)).toEqual({
      ok: false,
      missing: [],
      syntax: ['"${}"', '"${9X}"', '"${A B}"', '"${" without a closing "}"'],
    });
  });
});
