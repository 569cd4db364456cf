import { describe, expect, it } from 'vitest';
import {
  MODEL_TOOL_NAME_PATTERN,
  assignModelNames,
  createModelNameTable,
  decodePlainModelToolName,
  toModelToolName,
} from './toModelToolName.ts';

const ADVERSARIAL = [
  'core-fs.read',
  'core-fs.read_file',
  'core-fs.read-file',
  'core-fs.readFile',
  'a.b_c',
  'a_b.c',
  'a.b.c',
  'a.b__c',
  'a.b_.c',
  'a.b._c',
  'a._b',
  'a.b_',
  'a.b-c',
  'a-b.c',
  'a.b..c',
  'a.',
  '.a',
  'a',
  'mcp.github.create_issue',
  'mcp.github__create_issue',
  'mcp.github_create_issue',
  'mcp.github.create.issue',
  `p.${'x'.repeat(61)}`,
  `p.${'x'.repeat(62)}`,
  `p.${'x'.repeat(70)}1`,
  `p.${'x'.repeat(70)}2`,
  `${'q'.repeat(64)}.tool`,
  'ext.naïve',
  'ext.naive',
  'ext.na-ve',
  'ext.工具',
  'ext.🔧',
  'ext.tool name',
  'ext.tool/name',
  'Ext.tool',
  'ext.Tool',
  'ext.tool',
];

describe('toModelToolName', () => {
  it('keeps plain names readable: segments joined by __', () => {
    expect(
      ['core-fs.read', 'core-fs.read_file', 'core-fs.readFile', 'mcp.github.create_issue', 'a.b-c', `p.${'x'.repeat(61)}`].map(
        toModelToolName,
      ),
    ).toEqual(['core-fs__read', 'core-fs__read_file', 'core-fs__readFile', 'mcp__github__create_issue', 'a__b-c', `p__${'x'.repeat(61)}`]);
  });

  it('hashes everything else into <plugin>_<12 hex>_<readable rest>', () => {
    expect(
      ['a.b__c', 'a.b_', 'ext.naïve', 'ext.工具', 'ext.tool name', 'Ext.tool', `p.${'x'.repeat(62)}`, 'a', '.a'].map(toModelToolName),
    ).toEqual([
      'a_44b440f74f86_b_c',
      'a_2de17183f383_b',
      'ext_e4ab808dae5e_na-ve',
      'ext_756aaffddce2',
      'ext_cec42dee3fed_tool-name',
      'ext_ec309e3b24aa_tool',
      `p_d697508f372f_${'x'.repeat(49)}`,
      'a_ca978112ca1b',
      'x_36797c3aba1e_a',
    ]);
  });

  it('gives every adversarial name a distinct valid model name, and plain ones decode back', () => {
    const rendered = ADVERSARIAL.map(toModelToolName);
    expect(rendered.filter((name) => !MODEL_TOOL_NAME_PATTERN.test(name))).toEqual([]);
    expect(new Set(rendered).size).toBe(ADVERSARIAL.length);
    const decoded = ADVERSARIAL.filter((name, index) => decodePlainModelToolName(rendered[index]!) !== undefined);
    expect(decoded.map((name) => decodePlainModelToolName(toModelToolName(name)))).toEqual(decoded);
    expect(decoded).toEqual([
      'core-fs.read',
      'core-fs.read_file',
      'core-fs.read-file',
      'core-fs.readFile',
      'a.b_c',
      'a.b.c',
      'a.b-c',
      'a-b.c',
      'mcp.github.create_issue',
      'mcp.github_create_issue',
      'mcp.github.create.issue',
      `p.${'x'.repeat(61)}`,
      'ext.naive',
      'ext.na-ve',
      'ext.Tool',
      'ext.tool',
    ]);
  });

  it('keeps names apart that differ only past the 64-character cut, and names that differ only in separators', () => {
    const base = `core-fs.${'very_long_tool_name_'.repeat(5)}`;
    const pairs = [
      [`${base}alpha`, `${base}beta`],
      ['a.b_c', 'a_b.c'],
      ['a.b-c', 'a.b_c'],
      ['a.b.c', 'a.b_c'],
      ['p.x.y', 'p.x__y'],
    ];
    expect(pairs.map((pair) => pair.map(toModelToolName))).toEqual([
      [
        'core-fs_ecc5184fd921_very_long_tool_name_very_long_tool_name_ver',
        'core-fs_80492ec9f5f0_very_long_tool_name_very_long_tool_name_ver',
      ],
      ['a__b_c', 'a-b_a3715283aee1_c'],
      ['a__b-c', 'a__b_c'],
      ['a__b__c', 'a__b_c'],
      ['p__x__y', 'p_e1c4d41c6897_x_y'],
    ]);
    expect(toModelToolName(`${base}alpha`)).not.toBe(toModelToolName(`${base}beta`));
    expect(toModelToolName(`${base}alpha`).length).toBe(64);
  });

  it('never decodes a hashed name as a plain one', () => {
    expect(
      ['a_4f4e3b00d7c5_b_c', 'core-fs_read', 'core-fs___read', '__read', 'core-fs__', 'Core__read', 'a.b'].map(decodePlainModelToolName),
    ).toEqual([undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
  });
});

describe('createModelNameTable', () => {
  it('maps both ways for every adversarial name', () => {
    const table = createModelNameTable(ADVERSARIAL);
    const back = ADVERSARIAL.map((name) => table.fromModel(table.toModel(name)!));
    expect(back).toEqual(ADVERSARIAL);
    expect([table.toModel('unknown.tool'), table.fromModel('unknown__tool')]).toEqual([undefined, undefined]);
  });

  it('lengthens the hash of a later name whose hashed form is taken, and keeps earlier names as they were', () => {
    // With a 1-digit first hash, 40 hashed names must clash (16 values); each clash is resolved.
    const names = Array.from({ length: 40 }, (_, index) => `ext.tool${'é'.repeat(index + 1)}`); // all read as ext_?_tool
    const table = assignModelNames(names, 1);
    const rendered = names.map((name) => table.toModel(name)!);
    expect(new Set(rendered).size).toBe(40);
    expect(rendered.filter((name) => !MODEL_TOOL_NAME_PATTERN.test(name))).toEqual([]);
    expect(names.map((name) => table.fromModel(table.toModel(name)!))).toEqual(names);
    expect(rendered.slice(0, 3)).toEqual(['ext_0_tool', 'ext_b_tool', 'ext_e_tool']);
    expect(rendered.filter((name) => /^ext_[0-9a-f]{5}_/.test(name)).length).toBeGreaterThan(0);
    // the first holder of a name keeps it: the table over a prefix agrees with the full table
    const prefix = assignModelNames(names.slice(0, 20), 1);
    expect(names.slice(0, 20).map((name) => prefix.toModel(name))).toEqual(rendered.slice(0, 20));
  });

  it('never assigns a name the pure function would give a different tool (no collisions on real hash lengths)', () => {
    const names = Array.from({ length: 2000 }, (_, index) => `ext.${index % 2 === 0 ? 'naïve' : 'tool.x'}${index}`);
    const table = createModelNameTable(names);
    expect(names.filter((name) => table.toModel(name) !== toModelToolName(name))).toEqual([]);
    expect(new Set(names.map(toModelToolName)).size).toBe(2000);
  });
});
