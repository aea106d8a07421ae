"""Specs of ERBench's five crafted tables (``../shared/data/seeds/erbench``) in kgprobe's declarative form, with
the paper's templates (Tables 7, 8 and 20; the released scripts' known-entity prompts). Used by the crafted-table
tests and by ``benchmarks/erbench.py``."""

from __future__ import annotations

from pathlib import Path

import duckdb

BINARY = {
    "movie": ("binary/movie_data/crafted", "movie_df.csv",
              {"title": "common_entity", "year": "entity3", "director": "entity2", "star": "entity1"},
              ["director", "star", "year"], ["title"],
              "Is there a movie, released in {year}, starring {star} where {director} is the director?",
              "Is it true that there are no movies, released in {year}, starring {star} where {director} is the director?",
              "The movie is {title}, released in {year}.",
              ("Do you know the movie {title} released in {year}? If yes, did {star} star in the movie {title}? If yes, "
               "did {director} direct the movie {title}?"), {}, {"year": "int"}),
    "soccer": ("binary/fifa_data/crafted", "fifa_df.csv",
               {"player": "common_entity", "club": "entity1", "number": "entity3", "nationality": "entity2"},
               ["club", "number", "nationality"], ["player"],
               "Is there a soccer player from {nationality} who played for {club} with uniform number {number} in {club} in 2019?",
               ("Is it true that there are no soccer players from {nationality} who played for {club} with uniform number "
                "{number} in {club} in 2019?"), "The player is {player}.",
               ("Do you know the soccer player {player}? If yes, was {player} born in {nationality}? If yes, did {player} "
                "play for {club} with back number {number} in 2019?"), {"player": ["last_name"]}, {"number": "int"}),
    "airport": ("binary/airport_data/crafted", "airport_df.csv",
                {"icao": "column0", "name": "common_entity", "lat": "entity1", "lon": "entity2"},
                ["lat", "lon"], ["name"],
                "Is there an airport located at latitude {lat} and longitude {lon}?",
                "Is it true that there are no airports located at latitude {lat} and longitude {lon}?",
                "The airport is {name}.",
                "Do you know the airport {name}? If yes, is it located at latitude {lat} and longitude {lon}?", {},
                {"lat": {"round": 4}, "lon": {"round": 4}}),
    "music": ("binary/music_data/crafted", "music_df.csv",
              {"artist": "common_entity", "title": "entity1", "year": "entity2"}, ["title", "year"], ["artist"],
              "Is there an artist or group who sang a song titled {title} in {year}?",
              "Is it true that no artists nor groups sang a song titled {title} in {year}?",
              "The song is by {artist}.",
              "Do you know the music {title} by {artist}? If yes, was the {title} by {artist} released in {year}?", {}, {}),
    "book": ("binary/book_data/crafted", "book_df.csv",
             {"title": "common_entity", "author": "entity1", "date": "entity2"}, ["author", "date"], ["title"],
             "Is there a book written by {author} that was published in {date}?",
             "Is it true that there are no books written by {author} that were published in {date}?",
             "The book is titled {title}.",
             ("Do you know the book, {title} written by {author}? If yes, is the book {title} written by {author} "
              "published in {date}?"), {}, {}),
}


def binary_spec(root: Path, dataset: str) -> dict:
    folder, file, columns, lhs, rhs, basic, negated, explain, known, match, formats = BINARY[dataset]
    return {"name": dataset, "source": {"kind": "csv", "path": str(root / folder)},
            "relations": {dataset: {"file": file, "columns": columns}},
            "formats": {f"{dataset}.{k}": v for k, v in formats.items()},
            "fds": [{"name": f"{dataset}_bn", "dataset": dataset, "relation": dataset, "lhs": lhs, "rhs": rhs,
                     "basic": basic, "negated": negated, "explain": explain, "known": known, "match": match}]}


_Q = ["What is the false option about {what}? Provide an explanation.",
      "What's the inaccurate option about {what}? Provide an explanation.",
      "What is the wrong option regarding {what}? Provide an explanation."]

MC = {
    "movie": ("movie.csv", {"title": "common_entity", "year": "entity1", "director": "entity2", "country": "entity3",
                            "genre": "entity4"}, ["title", "year"],
              "the movie {title} released in year {year}",
              {"director": ["It was directed by {director}.", "Directed by {director}.", "The name of the Director is {director}."],
               "country": ["It was produced in the country {country}.", "Produced in the country {country}.",
                           "The movie was produced in the country {country}."],
               "genre": ["It is an {genre} movie.", "Has the genre of {genre} movie.", "The movie is an {genre} movie."]},
              {}, None),
    "soccer": ("soccer.csv", {"player": "common_entity", "club": "entity1", "number": "entity2", "nationality": "entity3",
                              "league": "entity4"}, ["player"], "soccer player named {player}",
               {"club": ["He played for {club} in 2019.", "Played for {club} in 2019.", "He participated in {club} during the year 2019."],
                "number": ["His uniform number was {number} in 2019.", "Wore jersey number {number} in 2019.",
                           "His jersey number during 2019 was {number}."],
                "nationality": ["He was born in {nationality}.", "Born in {nationality}.", "His birthplace is {nationality}."],
                "league": ["He played in {league} during the year 2019.", "Participated in league named {league} during the year 2019.",
                           "He participated in {league} during the year 2019."]}, {}, 1500),
    "airport": ("airport.csv", {"name": "common_entity", "icao": "entity1", "lat": "entity2", "lon": "entity3",
                                "country_code": "entity4"}, ["name"], "the airport {name}",
                {"icao": ["ICAO Shortcode of the airport is {icao}.", "The abbreviated form (ICAO) for the airport is {icao}.",
                          "The ICAO shortcode for the airport is the same with {icao}."],
                 "lat": ["Latitude of the airport is {lat}.", "The latitude of the airport is {lat}.", "The airport is located at {lat} latitude."],
                 "lon": ["Longitude of the airport is {lon}.", "The longitude of the airport is {lon}.", "The airport is located at {lon} longitude."],
                 "country_code": ["Country code of the airport is {country_code}.", "The country code of the airport is {country_code}.",
                                  "The airport has a country code of {country_code}."]},
                {"lat": {"round": 3}, "lon": {"round": 3}}, None),
    "music": ("music.csv", {"title": "common_entity", "artist": "entity1", "year": "entity2", "genre": "entity3"},
              ["title", "artist"], "the song {title} of the artist {artist}",
              {"year": ["The released year of the song is {year}.", "The song was released in {year}.", "The song was released in the year {year}."],
               "genre": ["The song is categorized as {genre} genre.", "The genre of the song is {genre}.", "The song belongs to {genre} genre."]},
              {}, None),
    "book": ("book.csv", {"title": "common_entity", "author": "entity1", "month": "entity2", "year": "entity3",
                          "publisher": "entity4"}, ["title", "author"],
             "the book titled {title}, written by an author named {author}",
             {"month": ["Published month of the book is {month}.", "The book was published in the month {month}.",
                        "The published month of the book is {month}."],
              "year": ["Published year of the book is {year}.", "The book was published in the year {year}.",
                       "The published year of the book is {year}."],
              "publisher": ["Published by the publisher named {publisher}.", "The book was published by the publisher named {publisher}.",
                            "The publisher of the book is the publisher named {publisher}."]}, {}, None),
}


def mc_spec(root: Path, dataset: str) -> tuple[dict, int | None]:
    file, columns, lhs, what, options, formats, limit = MC[dataset]
    rhs = list(options)
    spec = {"name": dataset, "source": {"kind": "csv", "path": str(root / "multi_choice/dataset/crafted")},
            "relations": {dataset: {"file": file, "columns": columns}},
            "formats": {f"{dataset}.{k}": v for k, v in formats.items()},
            "fds": [{"name": f"{dataset}_mc", "dataset": dataset, "relation": dataset, "lhs": lhs, "rhs": rhs,
                     "mc": {"questions": [q.format(what=what) for q in _Q], "options": options}}]}
    return spec, limit


def movie_director_spec(root: Path) -> dict:
    """Movie & Director (2-hop, Table 20): the released movie_year_final.csv read as two relations."""
    return {"name": "movie_director", "source": {"kind": "csv", "path": str(root / "binary/movie_data/crafted")},
            "relations": {"movies": {"file": "movie_year_final.csv", "columns": {"title": "common_entity", "year": "entity3",
                                                                                  "director": "entity2"}},
                          "directors": {"file": "movie_year_final.csv", "columns": {"name": "entity2", "birth_year": "entity4"},
                                        "key": ["name"]}},
            "foreign_keys": ["movies.director -> directors.name"],
            "formats": {"movies.year": "int", "directors.birth_year": "decade"},
            "fds": [{"name": "movie_director_fd", "relation": "movies", "lhs": ["title", "year"], "rhs": ["director"]}],
            "multihop": [{"name": "movie_director_year", "dataset": "movie_director",
                          "path": ["movies.director -> directors.name"], "show": ["title", "year"],
                          "target": "directors.birth_year", "match": {"directors.name": ["last_name"]},
                          "basic": "Was the director who directed the movie titled {title} that was released in {year} born in the {birth_year}?",
                          "negated": "Is it true that the director who directed the movie titled {title} that was released in {year} was not born in the {birth_year}?",
                          "explain": "{title} ({year}) was directed by {director}, who was born in {birth_year}.",
                          "known": "Do you know the movie {title} released in {year}? If yes, did {director} direct the movie {title}? Was {director} born in year {birth_year}?"}]}


def soccer_olympic_db(root: Path, path: Path) -> dict:
    """Soccer & Club & Olympic (3-hop, Table 20): the released CSVs as three relations in a DuckDB file (club
    cities lower-cased to meet the Olympic table's city names, as the released preprocessing does)."""
    base = root / "binary/soccer_olympic/crafted"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE soccer AS SELECT common_entity AS player, entity1 AS club FROM read_csv(?, header = true)",
                    [str(base / "fifa_df.csv")])
        con.execute("CREATE TABLE clubs AS SELECT club_name AS club, lower(city_name) AS city FROM read_csv(?, header = true)",
                    [str(base / "club_city_debug.csv")])
        con.execute("CREATE TABLE olympics AS SELECT city, CAST(year AS VARCHAR) AS years FROM read_csv(?, header = true, "
                    "all_varchar = true)", [str(base / "olympic.csv")])
    return {"name": "soccer_olympic", "source": {"kind": "duckdb", "path": str(path)},
            "relations": {"soccer": {"columns": ["player", "club"]}, "clubs": {"columns": ["club", "city"]},
                          "olympics": {"columns": ["city", "years"], "key": ["city"]}},
            "foreign_keys": ["soccer.club -> clubs.club"],
            "formats": {"olympics.years": "list"},
            "fds": [{"name": "player_club", "relation": "soccer", "lhs": ["player"], "rhs": ["club"]},
                    {"name": "club_city", "relation": "clubs", "lhs": ["club"], "rhs": ["city"]}],
            "multihop": [{"name": "soccer_olympic", "dataset": "soccer_olympic",
                          "path": ["soccer.club -> clubs.club", "clubs.city -> olympics.city?"], "show": ["player"],
                          "target": "olympics.years", "answer": "exists", "match": {"soccer.club": ["club"]},
                          "basic": "Did the city, where the soccer club, {player} played for in 2019, is located in, hosted the Summer Olympics?",
                          "negated": "Is it true that the city, where the soccer club, {player} played for in 2019, is located in, never hosted the Summer Olympics?",
                          "explain": "{player} played for {soccer.club} in 2019, which is located in {clubs.city}. Summer Olympics hosted there: {years}.",
                          "known": "Did {player} play for {soccer.club}? If yes, is {soccer.club} located in the city {clubs.city}?"}]}
