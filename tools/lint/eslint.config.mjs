// The Effect repository's lint setup (typescript-eslint + @effect/eslint-plugin's dprint formatter), run from this
// folder because typescript-eslint needs the TypeScript 5 compiler API that the desk's TypeScript 7 does not ship.
import * as effect from "@effect/eslint-plugin"
import { fileURLToPath } from "node:url"
import tseslint from "typescript-eslint"

const root = fileURLToPath(new URL("../..", import.meta.url))

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      ".build/**",
      ".desk-data/**",
      ".bench-data/**",
      "bench/results/**",
      "coverage/**",
      "tools/lint/**",
      "**/*.json",
      "**/*.md"
    ]
  },
  {
    files: ["**/*.ts", "**/*.mts", "**/*.mjs"],
    extends: [tseslint.configs.recommended, effect.configs.dprint],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { tsconfigRootDir: root },
      ecmaVersion: 2022,
      sourceType: "module"
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "no-fallthrough": "off",
      "no-irregular-whitespace": "off",
      "object-shorthand": "error",
      "sort-imports": ["error", {
        ignoreCase: true,
        ignoreDeclarationSort: true,
        ignoreMemberSort: false,
        memberSyntaxSortOrder: ["none", "all", "multiple", "single"],
        allowSeparatedGroups: false
      }],
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }]
    }
  }
)
