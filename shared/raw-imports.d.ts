// Text assets (unit templates, shell scripts) are imported as strings: vitest
// reads `?raw` natively and scripts/build.mjs has an esbuild plugin for it.
declare module '*?raw' {
  const text: string;
  export default text;
}
