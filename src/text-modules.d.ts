// Files imported `with { type: 'text' }` so that they are embedded in the compiled binary.
declare module '*.sql' {
  const text: string;
  export default text;
}
declare module '*.txt' {
  const text: string;
  export default text;
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const text: string;
  export default text;
}
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const text: string;
  export default text;
}
