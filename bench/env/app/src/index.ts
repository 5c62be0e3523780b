// The application's own code, compiled by the environment's build step (`npm run build`).
export function greet(name: string): string {
  return `hello, ${name}`;
}
console.log(greet("cocode"));
