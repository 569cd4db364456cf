/** One ranked hit of `ResourceCatalog.search`. Structurally the sdk's `HostToolHit`. */
export interface ToolSearchHit {
  readonly name: string;
  readonly plugin: string;
  readonly description: string;
  /** BM25F score, rounded to 4 decimals; higher is better. */
  readonly score: number;
}

/** What the index reads from each document. */
export interface SearchDocument {
  readonly name: string;
  readonly plugin: string;
  readonly description: string;
  readonly tags: readonly string[];
}

/** A BM25F index over names, tags and descriptions. */
export interface SearchIndex {
  search(query: string, limit: number): ToolSearchHit[];
}

// Field weights and length normalization: a word in the name says more than one in the prose.
const FIELDS = [
  { weight: 3, b: 0.3 }, // name
  { weight: 2, b: 0.3 }, // tags
  { weight: 1, b: 0.75 }, // description
] as const;
const K1 = 1.2;

const STOPWORDS = new Set(
  'a an and are as at be by can for from has have how i if in into is it its of on or that the their then this to was were what when which will with you your'.split(
    ' ',
  ),
);

/** Splits a tool name into words: on `.`, `_`, `-`, other punctuation and camelCase humps. */
export function splitName(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase());
}

/** Lower-cased words of prose, without stopwords, lightly stemmed. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (word.length === 0 || STOPWORDS.has(word)) continue;
    out.push(stem(word));
  }
  return out;
}

/** A deliberately small suffix stripper: files→file, queries→query, matches→match, reading→read. */
export function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(?:ches|shes|sses|xes|zes)$/.test(word)) return word.slice(0, -2);
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 3 && word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

function nameTokens(name: string): string[] {
  return splitName(name)
    .filter((word) => !STOPWORDS.has(word))
    .map(stem);
}

/** Builds the index once; queries are then a pass over the postings of the query's terms. */
export function createSearchIndex(documents: readonly SearchDocument[]): SearchIndex {
  const count = documents.length;
  // postings: term → doc index → term frequency per field
  const postings = new Map<string, Map<number, [number, number, number]>>();
  const lengths: Array<[number, number, number]> = [];
  const totals = [0, 0, 0];
  documents.forEach((doc, index) => {
    const fields = [nameTokens(doc.name), doc.tags.flatMap((tag) => tokenize(tag)), tokenize(doc.description)];
    const length: [number, number, number] = [fields[0]!.length, fields[1]!.length, fields[2]!.length];
    lengths.push(length);
    fields.forEach((tokens, field) => {
      totals[field]! += tokens.length;
      for (const token of tokens) {
        let byDoc = postings.get(token);
        if (byDoc === undefined) postings.set(token, (byDoc = new Map()));
        let tf = byDoc.get(index);
        if (tf === undefined) byDoc.set(index, (tf = [0, 0, 0]));
        tf[field]! += 1;
      }
    });
  });
  const averages = totals.map((total) => (count === 0 ? 0 : total / count));

  return {
    search(query, limit) {
      const terms = [...new Set([...nameTokens(query), ...tokenize(query)])];
      const scores = new Map<number, number>();
      for (const term of terms) {
        const byDoc = postings.get(term);
        if (byDoc === undefined) continue;
        const idf = Math.log(1 + (count - byDoc.size + 0.5) / (byDoc.size + 0.5));
        for (const [index, tf] of byDoc) {
          const length = lengths[index]!;
          let weighted = 0;
          for (let field = 0; field < 3; field += 1) {
            const frequency = tf[field]!;
            if (frequency === 0) continue;
            const { weight, b } = FIELDS[field]!;
            const average = averages[field]! || 1;
            weighted += (weight * frequency) / (1 - b + (b * length[field]!) / average);
          }
          scores.set(index, (scores.get(index) ?? 0) + (idf * weighted) / (K1 + weighted));
        }
      }
      return [...scores]
        .sort((left, right) => right[1] - left[1] || compare(documents[left[0]]!.name, documents[right[0]]!.name))
        .slice(0, limit)
        .map(([index, score]) => {
          const doc = documents[index]!;
          return { name: doc.name, plugin: doc.plugin, description: doc.description, score: Math.round(score * 10_000) / 10_000 };
        });
    },
  };
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
